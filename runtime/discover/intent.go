package discover

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/anvil-dev/anvil/runtime/air"
)

// The shape of a request. Most requests are an imperative: a verb that
// states what to do and the noun it is done to ("Create a service for an
// nginx deployment", "List issues in a repository", "Delete the branch I
// just merged"). Words after the object describe arguments (the nginx
// deployment, the port) and other verbs in a request usually name them too
// ("a Role that allows get, watch and list on pods"). So the first verb
// says which action the operation performs and the head of the first noun
// phrase after it says which resource; an entry agreeing with either ranks
// higher, and verbs after the first count less.

// Action classes: an entry's (from its AIR effect action) and a request's
// (from its first verb, by the synonym group it belongs to).
const (
	actNone uint8 = iota
	actGet        // one item
	actList       // a collection
	actCreate
	actUpdate
	actDelete
	actSearch
)

// actionClass is the class of an AIR effect action.
func actionClass(action string) uint8 {
	switch action {
	case "get":
		return actGet
	case "list":
		return actList
	case "create":
		return actCreate
	case "update", "replace":
		return actUpdate
	case "delete":
		return actDelete
	case "search":
		return actSearch
	}
	return actNone
}

// verbClass maps a synonym group's key (its first member, stemmed) to its
// action class; the get group resolves to actGet or actList by the number
// of its object.
var verbClass = func() map[string]uint8 {
	m := map[string]uint8{}
	for key, c := range map[string]uint8{"get": actGet, "create": actCreate, "delete": actDelete, "update": actUpdate, "search": actSearch} {
		m[stem(key)] = c
	}
	return m
}()

// intent is what a request's first verb and its object say.
type intent struct {
	class uint8  // action class of the first verb; actNone when it has none
	verb  uint32 // the first word's term when it names no class (approve, merge); noTerm otherwise
	head  uint32 // the object's head noun's term; noTerm when none was found
}

const noTerm = ^uint32(0)

// nounStops end a noun phrase besides the stop words: a relative clause or
// a participle that introduces a name ("a Role named pod-reader").
var nounStops = setOf("named", "called", "who", "whose", "where", "when", "while", "without", "within",
	"has", "have", "had", "did", "were",
	"across", "after", "before", "between", "under", "over", "through", "like", "not", "only", "just")

// requestIntent reads the first verb of the query and the head of the noun
// phrase after it. The verb is the first content word (stop words such as
// "please" or "I want to" are skipped); it gives a class when it belongs
// to a verb synonym group, else its term is compared with entries' action
// terms (approve, merge). The noun phrase runs from the next content word
// that is not another verb ("create or update secrets") to the next stop
// word, word with a digit, or word that introduces a name or clause (nounStops); its head
// is its last word ("release assets" → assets). A plural head turns a get
// into a list.
func (ix *Index) requestIntent(query string) intent {
	in := intent{verb: noTerm, head: noTerm}
	if len(query) > MaxQueryLen {
		query = query[:MaxQueryLen]
	}
	var buf [4]string
	verbSeen, inPhrase := false, false
	head := ""
	query, question := questionBody(query)
	if question {
		// A question asks to read: its verbs ("released", "succeed")
		// describe the thing asked about, not what to do to it.
		in.class, verbSeen = actGet, true
	}
words:
	for w, rest := nextWord(query); w != ""; w, rest = nextWord(rest) {
		lw := strings.ToLower(w)
		if stopWords[lw] || (inPhrase && (nounStops[lw] || hasDigit(lw))) {
			if inPhrase && lightNouns[head] && aboutWords[lw] {
				// "detailed information about the given issue": the
				// phrase that matters is the one after "about".
				inPhrase = false
				continue
			}
			if inPhrase {
				break
			}
			continue
		}
		terms := tokenize(buf[:0], lw)
		if len(terms) == 0 {
			continue
		}
		t := terms[len(terms)-1]
		vc, isVerb := verbClass[synonymConcept[t]]
		if !verbSeen && !isVerb && readVerbs[lw] {
			vc, isVerb = actGet, true
		}
		switch {
		case !verbSeen:
			verbSeen = true
			if isVerb {
				in.class = vc
				continue
			}
			if id, ok := ix.terms[t]; ok && ix.actionTerms[id] {
				in.verb = id
				continue
			}
			// No verb first ("issues assigned to me"): the phrase starts here.
		case !inPhrase && (isVerb || synonymConcept[t] == meConcept):
			continue // "create or update secrets", "show me the pulls", "list my repos"
		case question && !inPhrase && questionWords[lw]:
			continue // "what is the ...", "which albums has ..."
		case question && inPhrase && isVerb:
			// "did my issue get a label": the question's verb ends the
			// phrase it is asked about.
			break words
		}
		inPhrase = true
		head = lw
		in.head = noTerm
		if id, ok := ix.terms[t]; ok {
			in.head = id
		}
	}
	if in.class == actGet && plural(head) {
		in.class = actList
	}
	return in
}

// lightNouns say that something is to be read, not what: in "information
// about the given issue" or "the details of a workflow" the object is the
// noun phrase after aboutWords.
var lightNouns = setOf("information", "info", "details", "detail", "data")

// aboutWords join a light noun to what it is about.
var aboutWords = setOf("about", "of", "on", "for", "regarding")

// readVerbs ask to read when they open a request, though they are nouns
// elsewhere and so are no synonyms of "get" ("Output detailed information
// about the given issue"; "get output from a pod" is not a request to get).
var readVerbs = setOf("output")

// questionWords open a question: a request that starts with one asks for
// information ("What albums has Adele released?", "did my deployment
// succeed?", "how many stars does it have?"), so it is a read whatever
// verb follows. Auxiliaries also end a noun phrase ("albums has Adele").
var questionWords = setOf("what", "which", "who", "whom", "whose", "where", "when", "why", "how", "many", "much",
	"did", "does", "do", "is", "are", "was", "were", "has", "have", "had", "s")

// politeOpeners, followed by a person ("can you", "how do I", "how to"),
// open an imperative in question form: "can you create a repository"
// asks to create one.
var politeOpeners = setOf("can", "could", "would", "will", "may", "might", "should", "shall", "do", "how")

// people are the subjects of a polite opener.
var people = setOf("you", "u", "i", "we")

// questionBody reports whether the query is a question that asks to read,
// and returns it without a polite opener when it is an imperative in
// question form ("can you create a repo" → "create a repo"; "how do I
// delete a branch" → "delete a branch"; "how to fork" → "fork").
func questionBody(q string) (string, bool) {
	w1, rest := nextWord(q)
	l1 := strings.ToLower(w1)
	if politeOpeners[l1] {
		w2, rest2 := nextWord(rest)
		l2 := strings.ToLower(w2)
		if l2 == "to" {
			return rest2, false
		}
		if l1 == "how" && politeOpeners[l2] {
			w3, rest3 := nextWord(rest2)
			if people[strings.ToLower(w3)] {
				return rest3, false
			}
		}
		if people[l2] {
			return rest2, false
		}
	}
	return q, questionWords[l1] && l1 != "s"
}

// plural: an English plural noun ("assets", "branches", "policies"; not
// "status", "access", "class").
func plural(w string) bool {
	if len(w) < 4 || !strings.HasSuffix(w, "s") {
		return false
	}
	for _, suf := range []string{"ss", "us", "is"} {
		if strings.HasSuffix(w, suf) {
			return false
		}
	}
	return true
}

// nextWord returns the first word of s (letters, digits, and the hyphens,
// apostrophes and dots inside a word) and what follows it.
func nextWord(s string) (string, string) {
	start := -1
	for i, r := range s {
		inWord := unicode.IsLetter(r) || unicode.IsDigit(r)
		if start < 0 {
			if inWord {
				start = i
			}
			continue
		}
		if !inWord && !(r == '-' || r == '\'' || r == '.' || r == '_') {
			return s[start:i], s[i:]
		}
		if !inWord {
			// a joiner counts only between word characters
			next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
			if !(unicode.IsLetter(next) || unicode.IsDigit(next)) {
				return s[start:i], s[i:]
			}
		}
	}
	if start < 0 {
		return "", ""
	}
	return s[start:], ""
}

// meConcept is the key of the me/my synonym group.
var meConcept = stem("me")

// peopleConcept is the key of the user/person/people synonym group.
var peopleConcept = stem("user")

func hasDigit(w string) bool { return strings.ContainsAny(w, "0123456789") }

// entryShape is what the re-ranking knows of an entry beyond its text: its
// action class and action term, the terms of the resource it acts on (its
// effect resource and the last literal segment of its path) and whether it
// is deprecated.
type entryShape struct {
	class      uint8 // from the effect action
	titleClass uint8 // from the title's first word ("Add or update team membership": create)
	deprecated bool
	nameSearch bool   // a search that needs no id: where a name becomes one
	action     uint32 // the effect action's term; noTerm when none
	res        [2]uint32
}

// shapeOf computes an entry's shape from its operation, after the
// builder's terms are known.
func (b *Builder) shapeOf(op *air.Operation) entryShape {
	sh := entryShape{class: actionClass(op.Effect.Action), deprecated: deprecated(op), action: noTerm, res: [2]uint32{noTerm, noTerm}}
	last := func(s string) uint32 {
		ts := tokenize(nil, s)
		if len(ts) == 0 {
			return noTerm
		}
		if id, ok := b.terms[ts[len(ts)-1]]; ok {
			return id
		}
		return noTerm
	}
	sh.action = last(op.Effect.Action)
	if w, _ := nextWord(op.DisplayName); w != "" {
		if ts := tokenize(nil, strings.ToLower(w)); len(ts) == 1 {
			if ts[0] == stem("list") {
				sh.titleClass = actList
			} else {
				sh.titleClass = verbClass[synonymConcept[ts[0]]]
			}
		}
	}
	if sh.class == actSearch {
		// A search the caller must already give an id (TMDB's find by
		// an external id) is no way from a name to an id.
		sh.nameSearch = true
		for _, p := range op.Input.Params {
			if p.Required && idArgument(p.Key) {
				sh.nameSearch = false
			}
		}
	}
	sh.res[0] = last(op.Effect.Resource)
	sh.res[1] = last(lastLiteralSegment(op.SourceRef.Path))
	return sh
}

// lastLiteralSegment is the last path segment that is not a placeholder.
func lastLiteralSegment(path string) string {
	segs := strings.Split(path, "/")
	for i := len(segs) - 1; i >= 0; i-- {
		if s := segs[i]; s != "" && !strings.HasPrefix(s, "{") {
			return s
		}
	}
	return ""
}

// deprecated: the operation is marked deprecated, or its description's
// first paragraph says so of the operation ("deprecated: use the 'watch'
// parameter with a list operation instead", "This endpoint is deprecated").
func deprecated(op *air.Operation) bool {
	if op.Deprecated {
		return true
	}
	d := op.Description
	if p := strings.Index(d, "\n\n"); p >= 0 {
		d = d[:p]
	}
	d = strings.ToLower(d)
	return strings.Contains(d, "deprecated:") || strings.Contains(d, "endpoint is deprecated") ||
		strings.Contains(d, "operation is deprecated") || strings.HasPrefix(d, "deprecated")
}

// Re-ranking factors of the request's shape: an entry whose action class
// agrees with the first verb, or whose resource is the object's head noun,
// is multiplied by 1 + the boost; a deprecated entry by deprecatedFactor.
// A get request half-agrees with a list entry and the reverse (the number
// of the object is a weak signal).
const (
	actionBoost      = 0.5
	searchBoost      = 1.0
	resourceBoost    = 0.5
	deprecatedFactor = 0.5
	laterVerbWeight  = 0.5
)

// agrees is how well an entry's action class c agrees with the request's:
// 1 when equal, ½ for get against list and for a search answered by a
// list, 0 otherwise.
func (in intent) agrees(c uint8) float32 {
	switch {
	case in.class == actNone || c == actNone:
		return 0
	case in.class == c:
		return 1
	case in.class == actSearch && c == actList, in.class == actGet && c == actList, in.class == actList && c == actGet:
		return 0.5
	}
	return 0
}

// shapeFactor is the entry's re-ranking factor for the request.
func (in intent) shapeFactor(sh *entryShape) float32 {
	f := float32(1)
	switch agree := max(in.agrees(sh.class), in.agrees(sh.titleClass)); {
	case agree > 0 && in.class == actSearch && sh.class == actSearch:
		f *= 1 + searchBoost
	case agree > 0:
		f *= 1 + actionBoost*agree
	case in.verb != noTerm && in.verb == sh.action:
		f *= 1 + actionBoost
	}
	if in.head != noTerm && (in.head == sh.res[0] || in.head == sh.res[1]) {
		f *= 1 + resourceBoost
	}
	if sh.deprecated {
		f *= deprecatedFactor
	}
	return f
}
