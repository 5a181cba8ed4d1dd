package lower

import (
	"html"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/anvil-dev/anvil/compiler/naming"
	"github.com/anvil-dev/anvil/compiler/openapi"
)

// cleanTitle is a display name on one line: white space (a spec's trailing
// newline, a summary wrapped over lines) trimmed at both ends and collapsed
// to single spaces inside, so tables and search results show it as written.
func cleanTitle(s string) string { return strings.Join(strings.Fields(s), " ") }

// distinctTitles makes display names that the spec repeats ("Get Details"
// for /movie/{movie_id}, /person/{person_id} and /tv/{tv_id}) tell their
// operations apart: each title shared by several operations gains, after
// its last word, the literal path words it does not already mention and
// that not every operation of its group has ("Get movie details", "Get
// person details"; "List organization secrets" under /orgs/{org}/actions
// and /orgs/{org}/dependabot becomes "List organization actions secrets"
// and "List organization dependabot secrets"). A title still shared after
// that gains its method and path in brackets. Titles a manifest sets are
// the operator's words and are never changed; comparison ignores case.
//
// A spec title that is not shared but names only part of what its
// operation is ("Person" for /3/search/person, "Create" for POST /3/list)
// is then completed from its path (pathTitle), unless the completed
// title is one another operation already has; titles made from the
// operation's name when the spec has no summary are left as they are.
// This runs after the shared titles gained their context, so that a
// title it completes ("Movie Credits" for /person/{person_id}/
// movie_credits → "Person movie credits") frees the one a shared title
// became ("Movie credits" for /movie/{movie_id}/credits).
func (l *lowerer) distinctTitles() {
	groups := map[string][]*opState{}
	var keys []string
	for _, st := range l.ops {
		if st.m != nil && st.m.DisplayName != "" {
			continue
		}
		k := strings.ToLower(st.op.DisplayName)
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], st)
	}
	taken := map[string]int{}
	spell := spelling{}
	for _, st := range l.ops {
		taken[strings.ToLower(st.op.DisplayName)]++
		spell.learn(st.op.DisplayName)
	}
	var changed []*opState
	for _, k := range keys {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		ctx := make([][]string, len(g))
		count := map[string]int{}
		for i, st := range g {
			ctx[i] = pathContext(st.op.DisplayName, st.spec.Path)
			for _, w := range ctx[i] {
				count[w]++
			}
		}
		for i, st := range g {
			var distinct []string
			for _, w := range ctx[i] {
				if count[w] < len(g) {
					distinct = append(distinct, w)
				}
			}
			if t := withContext(st.op.DisplayName, st.spec.Path, spell.words(distinct)); t != st.op.DisplayName {
				taken[k]--
				st.op.DisplayName = t
				taken[strings.ToLower(t)]++
			}
			changed = append(changed, st)
		}
	}
	for _, k := range keys {
		g := groups[k]
		if len(g) != 1 || g[0].op.DisplayName != cleanTitle(g[0].spec.Summary) {
			continue
		}
		st := g[0]
		t := pathTitle(st.op.DisplayName, st.spec.Path, spell)
		if lt := strings.ToLower(t); t != st.op.DisplayName && taken[lt] == 0 {
			taken[k]--
			st.op.DisplayName = t
			taken[lt]++
		}
	}
	for _, st := range changed {
		if k := strings.ToLower(st.op.DisplayName); taken[k] > 1 {
			st.op.DisplayName += " (" + st.spec.Method + " " + st.spec.Path + ")"
		}
	}
}

// pathContext lists the words of path's literal segments that title does
// not mention (compared singular and plural alike, case-blind: wordForms),
// in path order, each once; version segments (v1, 3, api) are skipped.
func pathContext(title, path string) []string {
	mentioned := map[string]bool{}
	mention := func(w string) {
		for _, f := range wordForms(w) {
			if f != "" {
				mentioned[f] = true
			}
		}
	}
	for _, w := range titleWords(title) {
		mention(w)
	}
	var ctx []string
	for _, seg := range strings.Split(path, "/") {
		if seg == "" || strings.HasPrefix(seg, "{") || versionSegment(seg) {
			continue
		}
		for _, w := range segmentWords(seg) {
			if fs := wordForms(w); !slices.ContainsFunc(fs[:], func(f string) bool { return f != "" && mentioned[f] }) {
				mention(w)
				ctx = append(ctx, w)
			}
		}
	}
	return ctx
}

// titleWords are the lower-case words of a title (letters and digits).
func titleWords(title string) []string {
	return strings.FieldsFunc(strings.ToLower(title), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// segmentWords are the lower-case words of a literal path segment
// (alternative_names, watch-providers, tv.list), its format suffix and
// OData key left out.
func segmentWords(seg string) []string {
	return strings.FieldsFunc(strings.ToLower(cleanSegment(seg)), func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == ' ' })
}

// irregularPlurals maps the plurals Singularize cannot know to their
// singular, for comparing title words with path words (TMDB's "People"
// under /trending/person).
var irregularPlurals = map[string]string{"people": "person", "children": "child", "men": "man", "women": "woman", "media": "medium"}

// wordForms are the forms a lower-case word is compared by, singular and
// plural alike: itself, its Singularize, without a final "s" (movies →
// movie, where Singularize says movy), and an irregular singular ("" where
// there is none). Two words are the same when their forms meet. An array,
// not a slice: every title of a large spec is compared.
func wordForms(w string) [4]string {
	f := [4]string{w, Singularize(w), "", irregularPlurals[w]}
	if strings.HasSuffix(w, "s") {
		f[2] = w[:len(w)-1]
	}
	return f
}

// sameWord reports whether two lower-case words are one word, singular and
// plural alike.
func sameWord(a, b string) bool {
	fb := wordForms(b)
	for _, f := range wordForms(a) {
		if f != "" && slices.Contains(fb[:], f) {
			return true
		}
	}
	return false
}

// titleVerbs are the words a title that is only a verb says ("Create",
// "Clear", "Delete"): pathTitle names the resource after it.
var titleVerbs = func() map[string]bool {
	m := set("clear", "reset", "archive", "unarchive", "restore", "start", "stop", "enable", "disable", "refresh",
		"sync", "merge", "close", "open", "lock", "unlock", "publish", "unpublish", "upload", "download", "import",
		"rate", "follow", "unfollow", "subscribe", "unsubscribe", "star", "unstar", "pin", "unpin", "invite", "revoke")
	for _, ws := range []map[string]bool{postUpdateWords, postDeleteWords} {
		for w := range ws {
			m[w] = true
		}
	}
	for w := range trailingVerbs {
		m[w] = true
	}
	return m
}()

// spelling maps a lower-case word to the capitals the spec's own titles
// give it where they are not just an initial capital ("tv" → "TV", "ids"
// → "IDs"), so that a path word a title gains reads as the spec writes
// it ("TV airing today", not "Tv airing today"). The first spelling seen,
// in operation order, is kept.
type spelling map[string]string

// learn records the spellings of title's words.
func (sp spelling) learn(title string) {
	for _, w := range strings.Fields(title) {
		w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		r, n := utf8.DecodeRuneInString(w)
		if n == 0 || w[n:] == strings.ToLower(w[n:]) || !unicode.IsLetter(r) {
			continue
		}
		if l := strings.ToLower(w); sp[l] == "" {
			sp[l] = w
		}
	}
}

// words spells each lower-case word as the spec does (a nil spelling
// keeps them).
func (sp spelling) words(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		if s := sp[w]; s != "" {
			w = s
		}
		out[i] = w
	}
	return out
}

// pathTitle completes a spec title that says only a resource or only a
// verb from its path, the general rule being:
//
//   - a title whose words all name the path's last literal segments (the
//     literal segments after its last placeholder, trailing placeholders
//     aside; singular and plural alike) gains, in front, the nearest
//     literal segment before the ones it names, placeholders and
//     version segments (3, v1, api) skipped: that segment says what is
//     done or whose it is ("Person" under /3/search/person → "Search
//     person", "People" under /3/trending/person/{time_window} →
//     "Trending people", "Credits" under /movie/{movie_id}/credits →
//     "Movie credits");
//   - a title that is one bare verb gains the resource: the last literal
//     segment that is not the verb itself, its last word singular unless
//     the verb lists ("Create" for POST /3/list → "Create list", "Clear"
//     for /3/list/{list_id}/clear → "Clear list").
//
// The words it adds are spelled as the spec's titles spell them (spell).
// A title the path has nothing to add to is returned as it is.
func pathTitle(title, path string, spell spelling) string {
	words := titleWords(title)
	if len(words) == 0 || !(len(words) == 1 && titleVerbs[words[0]]) && !inPath(words, strings.ToLower(path)) {
		return title
	}
	var lits []pathLit
	for _, seg := range splitPath(path) {
		switch {
		case isParamSeg(seg):
			if n := len(lits); n > 0 {
				lits[n-1].after = true
			}
		case !versionSegment(seg):
			if ws := segmentWords(seg); len(ws) > 0 {
				lits = append(lits, pathLit{words: ws})
			}
		}
	}
	if len(lits) == 0 {
		return title
	}
	if len(words) == 1 && titleVerbs[words[0]] {
		for i := len(lits) - 1; i >= 0; i-- {
			ws := lits[i].words
			if len(ws) == 1 && sameWord(ws[0], words[0]) {
				continue
			}
			res := slices.Clone(ws)
			if words[0] != "list" && words[0] != "search" {
				res[len(res)-1] = Singularize(res[len(res)-1])
			}
			return title + " " + strings.Join(spell.words(res), " ")
		}
		return title
	}
	// The trailing run: the literal segments after the last placeholder
	// that has a literal after it.
	start := len(lits) - 1
	for start > 0 && !lits[start-1].after {
		start--
	}
	for k := len(lits) - 1; k >= start; k-- {
		if !coversTitle(lits[k:], words) {
			continue
		}
		if k == 0 {
			return title
		}
		prefix := strings.Join(spell.words(lits[k-1].words), " ")
		r, n := utf8.DecodeRuneInString(prefix)
		return string(unicode.ToUpper(r)) + prefix[n:] + " " + lowerTitleWords(title)
	}
	return title
}

// inPath reports whether each word is a word of the lower-case path,
// placeholders included (sameWord): a test without allocations that
// spares most titles of a large spec ("Get a repository") the
// segment-by-segment one.
func inPath(words []string, path string) bool {
	sep := func(r rune) bool { return r == '/' || r == '_' || r == '-' || r == '.' || r == '{' || r == '}' }
	for _, w := range words {
		found := false
		for pw := range strings.FieldsFuncSeq(path, sep) {
			if sameWord(pw, w) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// pathLit is a literal path segment's words; after marks a placeholder
// between it and the next literal segment.
type pathLit struct {
	words []string
	after bool
}

// coversTitle reports whether every title word is a word of the segments.
func coversTitle(lits []pathLit, words []string) bool {
	for _, w := range words {
		if !slices.ContainsFunc(lits, func(l pathLit) bool {
			return slices.ContainsFunc(l.words, func(s string) bool { return sameWord(s, w) })
		}) {
			return false
		}
	}
	return true
}

// withContext inserts the context words into title before its last word,
// the noun it is about ("Get Images" → "Get movie images", "List
// organization secrets" → "List organization actions secrets"). A title
// that is one path segment's words is a name the path spells ("Top
// Rated" for /movie/top_rated, "Account States" for /movie/{movie_id}/
// account_states), not a verb and a noun: the context goes in front, so
// the name stays whole ("Movie top rated", not "Top movie rated").
func withContext(title, path string, ctx []string) string {
	if len(ctx) == 0 {
		return title
	}
	c := strings.Join(ctx, " ")
	head, last, found := cutLast(title, " ")
	if !found || segmentTitle(titleWords(title), path) {
		r, n := utf8.DecodeRuneInString(c)
		return string(unicode.ToUpper(r)) + c[n:] + " " + lowerTitleWords(title)
	}
	return head + " " + c + " " + lowerTitleWords(last)
}

// segmentTitle reports whether words are the words of one literal
// segment of path, in order (singular and plural alike).
func segmentTitle(words []string, path string) bool {
	for _, seg := range splitPath(path) {
		if isParamSeg(seg) {
			continue
		}
		if slices.EqualFunc(segmentWords(seg), words, sameWord) {
			return true
		}
	}
	return false
}

func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// lowerTitleWords lower-cases the Title-case words of s ("Images" →
// "images") and keeps the rest (TV, ID, iOS) as written.
func lowerTitleWords(s string) string {
	words := strings.Split(s, " ")
	for i, w := range words {
		r, n := utf8.DecodeRuneInString(w)
		if unicode.IsUpper(r) && w[n:] == strings.ToLower(w[n:]) {
			words[i] = strings.ToLower(w)
		}
	}
	return strings.Join(words, " ")
}

// versionSegment reports a path segment that names an API version or
// prefix rather than a resource: v1, v2beta, 3, api.
func versionSegment(s string) bool {
	ls := strings.ToLower(s)
	if ls == "api" || ls == "rest" {
		return true
	}
	if ls != "" && ls[0] == 'v' {
		ls = ls[1:]
	}
	return ls != "" && ls[0] >= '0' && ls[0] <= '9'
}

// routeTitle is the title of an operation the spec gives no summary when
// its operationId only spells its route: every word of the id is the
// method or a word of the path (Stripe's GetAccountsAccountBankAccountsId
// for GET /v1/accounts/{account}/bank_accounts/{id}), so a title made
// from it ("Get accounts account bank accounts id") says nothing the path
// does not. The description's first sentence says what the operation
// does ("Retrieve a specified external account for a given bank
// account"), and is the title when it is short: plain text (HTML tags
// dropped, entities decoded), at most maxTitleWords words. "" otherwise,
// and the title is made from the operation's name.
func routeTitle(op *openapi.Operation) string {
	words := naming.Words(op.OperationID)
	if len(words) == 0 {
		return ""
	}
	route := segmentWords(strings.ToLower(op.Method))
	for _, seg := range splitPath(op.Path) {
		route = append(route, segmentWords(strings.Trim(seg, "{}"))...)
		route = append(route, naming.Words(strings.Trim(seg, "{}"))...)
	}
	for _, w := range words {
		lw := strings.ToLower(w)
		if !slices.ContainsFunc(route, func(r string) bool { return sameWord(strings.ToLower(r), lw) }) {
			return ""
		}
	}
	return shortSentence(op.Description)
}

// maxTitleWords bounds a title taken from a description.
const maxTitleWords = 12

var (
	htmlTag = regexp.MustCompile(`<[^>]*>`)
	// spaceBeforeMark is the space a dropped tag leaves before a mark
	// ("<a>Connect</a>, you can").
	spaceBeforeMark = regexp.MustCompile(` ([,.;:!?])`)
)

// shortSentence is the first sentence of a description as plain text
// with a capital first letter and no final full stop, or "" when it has
// more than maxTitleWords words.
func shortSentence(d string) string {
	d = cleanTitle(html.UnescapeString(htmlTag.ReplaceAllString(d, " ")))
	d = spaceBeforeMark.ReplaceAllString(d, "$1")
	if i := strings.Index(d, ". "); i >= 0 {
		d = d[:i]
	}
	d = strings.TrimSuffix(d, ".")
	if d == "" || len(strings.Fields(d)) > maxTitleWords {
		return ""
	}
	r, n := utf8.DecodeRuneInString(d)
	return string(unicode.ToUpper(r)) + d[n:]
}
