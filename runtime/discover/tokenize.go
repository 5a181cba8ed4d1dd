package discover

import (
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// maxTokenLen bounds one token: longer runs of letters (base64 blobs, hashes)
// carry no meaning for search and are dropped.
const maxTokenLen = 40

// tokenize appends the search terms of s to dst: s is split into words at
// every character that is not a letter or digit (so snake_case, kebab-case,
// dotted ids and path segments split), each word is split again at camelCase
// boundaries ("listForRepo" → list, for, repo; "HTTPServer" → http, server),
// lower-cased, stop words are dropped, and what remains is stemmed (stem) and
// mapped to its canonical term (canonical), which can be more than one term
// ("pr" → pull, request). URLs are skipped whole. The same function tokenises
// documents and queries, so both sides agree on every term.
func tokenize(dst []string, s string) []string { return tokenizeText(dst, s, false) }

// tokenizeQuery is tokenize for a query: a URL in it is what the request
// is about ("paste it to https://gist.github.com", "review
// https://github.com/o/r/pull/3"), not a link to documentation, so its
// host and path words are kept (urlParts).
func tokenizeQuery(dst []string, s string) []string { return tokenizeText(dst, s, true) }

func tokenizeText(dst []string, s string, urls bool) []string {
	for {
		i := urlStart(s)
		if i < 0 {
			return appendWords(dst, s)
		}
		dst = appendWords(dst, s[:i])
		n := urlLen(s[i:])
		if urls {
			host, path := urlParts(s[i : i+n])
			dst = appendWords(appendWords(dst, host), path)
		}
		s = s[i+n:]
	}
}

// appendWords appends the terms of the words of s (no URL in it).
func appendWords(dst []string, s string) []string {
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		if !isWordRune(r) {
			s = s[size:]
			continue
		}
		end := size
		for end < len(s) {
			r2, sz := utf8.DecodeRuneInString(s[end:])
			if !isWordRune(r2) {
				break
			}
			end += sz
		}
		dst = splitCamel(dst, s[:end])
		s = s[end:]
	}
	return dst
}

// urlStart is the index of the first http(s) URL of s that starts a word
// (not inside one), or -1.
func urlStart(s string) int {
	for from := 0; ; {
		i := strings.Index(s[from:], "http")
		if i < 0 {
			return -1
		}
		i += from
		if r, _ := utf8.DecodeLastRuneInString(s[:i]); (i == 0 || !isWordRune(r)) && urlLen(s[i:]) > 0 {
			return i
		}
		from = i + len("http")
	}
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// urlParts are a URL's host, without "www" and its top-level domain
// (gist.github.com → gist.github), and its path.
func urlParts(u string) (host, path string) {
	_, rest, _ := strings.Cut(u, "://")
	host, path, _ = strings.Cut(rest, "/")
	host, _, _ = strings.Cut(host, ":")
	host = strings.TrimPrefix(host, "www.")
	if i := strings.LastIndexByte(host, '.'); i >= 0 {
		host = host[:i]
	}
	return host, path
}

// urlLen is the length of the http(s) URL s starts with, or 0. The URL ends
// at white space or at a closing bracket or quote (markdown links).
func urlLen(s string) int {
	if !(strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")) {
		return 0
	}
	i := strings.IndexAny(s, " \t\r\n)]>\"'`")
	if i < 0 {
		return len(s)
	}
	return i
}

// splitCamel splits one word (letters and digits only) at lower→upper and
// UPPER→Upper-lower boundaries and appends the normalised parts.
func splitCamel(dst []string, w string) []string {
	start := 0
	prev := rune(-1)
	for i, r := range w {
		if i > start && unicode.IsUpper(r) {
			next, _ := utf8.DecodeRuneInString(w[i+utf8.RuneLen(r):])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && unicode.IsLower(next)) {
				dst = appendTerm(dst, w[start:i])
				start = i
			}
		}
		prev = r
	}
	return appendTerm(dst, w[start:])
}

// appendTerm lower-cases, filters, stems and canonicalises one word.
func appendTerm(dst []string, w string) []string {
	if len(w) > maxTokenLen {
		return dst
	}
	w = strings.ToLower(w)
	if stopWords[w] {
		return dst
	}
	st := stem(w)
	if c, ok := canonical[st]; ok {
		return append(dst, c...)
	}
	return append(dst, st)
}

// stem is the Snowball English (Porter 2) stemmer, from
// github.com/kljensen/snowball: "movies" and "movie" both become "movi",
// "branches"/"branch", "releases"/"released"/"release" meet. Words that
// are not plain lower-case ASCII (other scripts, digits) are kept as
// they are. Documents and queries pass through the same function, so an
// imperfect stem still matches itself.
//
// Agent nouns of eight letters or more meet their verb first
// ("contributor"/"contributed", "follower"/"follow", "director"/
// "directed"), as do -ee nouns of seven or more ("assignee"/"assign").
func stem(w string) string {
	if !isASCIILower(w) {
		return w
	}
	if st, ok := stemCache.Load(w); ok {
		return st.(string)
	}
	st := stemWord(w)
	if stemCached.Add(1) <= maxStemCache {
		stemCache.Store(strings.Clone(w), st)
	}
	return st
}

// stemCache memoises stem for the first maxStemCache words it sees (an
// index's vocabulary and the queries' words repeat; the Snowball stemmer
// costs about a microsecond a word). Bounded, so hostile queries cannot
// grow it without end; a word not cached is stemmed again.
var (
	stemCache  sync.Map // string → string
	stemCached atomic.Int64
)

const maxStemCache = 1 << 16

func stemWord(w string) string {
	base := strings.TrimSuffix(w, "s")
	switch {
	case len(base) >= 7 && strings.HasSuffix(base, "ee"):
		return english.Stem(base[:len(base)-2], true)
	case len(base) >= 8 && (strings.HasSuffix(base, "or") || strings.HasSuffix(base, "er")):
		return english.Stem(base[:len(base)-2], true)
	}
	return english.Stem(w, true)
}

func isASCIILower(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return len(w) > 0
}

// stopWords are dropped from documents and queries: function words that say
// nothing about which operation is meant.
var stopWords = setOf(
	"a", "an", "the", "of", "to", "in", "on", "at", "for", "from", "by", "with",
	"and", "or", "but", "is", "are", "was", "be", "been", "it", "its", "this",
	"that", "these", "those", "as", "into", "about", "can", "could", "would",
	"should", "will", "do", "does", "please", "want", "need", "how", "what",
	"which", "some", "any", "there", "here", "so", "if", "then", "than",
	"via", "using", "use", "just", "also", "up", "we", "our", "you",
	"let", "lets", "s", "t", "am", "i", "all", "every", "each",
)

// canonical maps a stemmed word to the term(s) it is indexed under:
// abbreviations and their long forms meet on one spelling.
var canonical = func() map[string][]string {
	m := map[string][]string{}
	add := func(to string, from ...string) {
		var terms []string // stemmed, as every indexed word is
		for _, w := range strings.Fields(to) {
			terms = append(terms, stem(w))
		}
		for _, f := range from {
			m[stem(f)] = terms
		}
	}
	add("repo", "repository", "repositories", "repos")
	add("org", "organization", "organizations", "organisation", "organisations", "orgs")
	add("pull request", "pr", "prs")
	add("config", "configuration", "configurations", "configs")
	add("environment", "env", "envs")
	add("directory", "dir", "dirs", "folder", "folders")
	add("description", "desc")
	add("information", "info")
	add("message", "msg", "msgs")
	add("authentication", "auth")
	add("application", "app", "apps")
	add("statistic", "stats", "stat")
	return m
}()

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
