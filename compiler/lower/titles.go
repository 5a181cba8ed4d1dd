package lower

import (
	"strings"
	"unicode"
	"unicode/utf8"
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
	for _, st := range l.ops {
		taken[strings.ToLower(st.op.DisplayName)]++
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
			if t := withContext(st.op.DisplayName, distinct); t != st.op.DisplayName {
				taken[k]--
				st.op.DisplayName = t
				taken[strings.ToLower(t)]++
			}
			changed = append(changed, st)
		}
	}
	for _, st := range changed {
		if k := strings.ToLower(st.op.DisplayName); taken[k] > 1 {
			st.op.DisplayName += " (" + st.spec.Method + " " + st.spec.Path + ")"
		}
	}
}

// pathContext lists the words of path's literal segments that title does
// not mention (compared singular and case-blind), in path order, each once;
// version segments (v1, 3, api) are skipped.
func pathContext(title, path string) []string {
	mentioned := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(title), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		mentioned[Singularize(w)] = true
	}
	var ctx []string
	for _, seg := range strings.Split(path, "/") {
		if seg == "" || strings.HasPrefix(seg, "{") || versionSegment(seg) {
			continue
		}
		for _, w := range strings.FieldsFunc(seg, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
			lw := strings.ToLower(w)
			if !mentioned[Singularize(lw)] {
				mentioned[Singularize(lw)] = true
				ctx = append(ctx, lw)
			}
		}
	}
	return ctx
}

// withContext inserts the context words into title before its last word,
// the noun it is about ("Get Images" → "Get movie images", "List
// organization secrets" → "List organization actions secrets").
func withContext(title string, ctx []string) string {
	if len(ctx) == 0 {
		return title
	}
	c := strings.Join(ctx, " ")
	head, last, found := cutLast(title, " ")
	if !found {
		r, n := utf8.DecodeRuneInString(c)
		return string(unicode.ToUpper(r)) + c[n:] + " " + lowerTitleWords(title)
	}
	return head + " " + c + " " + lowerTitleWords(last)
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
