package lower

import (
	"regexp"
	"strings"

	"github.com/anvil-dev/anvil/compiler/naming"
)

// onlyLoseS lists plural endings whose singular ends in "che" (cache, niche,
// …): they lose only the final "s", not "es". Matched as word suffixes.
var onlyLoseS = []string{
	"caches", "niches", "headaches", "avalanches", "moustaches", "mustaches",
	"cliches", "quiches", "creches", "tranches", "brioches", "psyches", "fiches",
}

// Singularize applies the naming rules, in this order:
//
//  1. "ies" → "y" (entries → entry);
//  2. caches, niches and similar lose only the "s" (caches → cache);
//  3. (ch|sh|x|zz|ss)es lose "es" (branches → branch, boxes → box);
//  4. "uses" loses "es" (statuses → status);
//  5. any other "ses" loses the final "s" (releases → release);
//  6. a final "s" is dropped unless the word ends in "ss" or "us"
//     (issues → issue, status → status).
//
// Matching ignores case; the kept stem keeps its case. A rule applies only
// when something is left of the word.
func Singularize(w string) string {
	ends := func(suf string) bool { return len(w) >= len(suf) && strings.EqualFold(w[len(w)-len(suf):], suf) }
	has := func(suf string) bool { return len(w) > len(suf) && ends(suf) }
	switch {
	case has("ies"):
		return w[:len(w)-3] + "y"
	}
	for _, suf := range onlyLoseS {
		if strings.EqualFold(w, suf) || has(suf) {
			return w[:len(w)-1]
		}
	}
	for _, suf := range []string{"ches", "shes", "xes", "zzes", "sses"} {
		if has(suf) {
			return w[:len(w)-2]
		}
	}
	switch {
	case has("uses"):
		return w[:len(w)-2]
	case has("ses"):
		return w[:len(w)-1]
	case has("s") && !ends("ss") && !ends("us"):
		return w[:len(w)-1]
	}
	return w
}

var validKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// InputKey is the input key for a wire name: the name itself when it matches
// ^[A-Za-z_][A-Za-z0-9_]*$, else its snake_case ("Idempotency-Key" →
// "idempotency_key"). A name with no letters or digits becomes "param"; a key
// that would start with a digit gets a leading "_".
func InputKey(name string) string {
	if validKey.MatchString(name) {
		return name
	}
	k := naming.Snake(name)
	if k == "" {
		return "param"
	}
	if k[0] >= '0' && k[0] <= '9' {
		k = "_" + k
	}
	return k
}

// Verb classes used by name derivation.
var (
	// Leading operationId words that make a POST an update or a delete.
	postUpdateWords = set("update", "edit", "modify", "change", "set", "patch", "rename")
	postDeleteWords = set("delete", "remove", "destroy", "purge", "erase")
	// Read-intent words (first word of the operationId) override the action of a GET, HEAD or POST.
	readIntentWords = map[string]string{
		"search": "search", "find": "search", "query": "search", "lookup": "search",
		"export": "export", "download": "export",
		"validate": "validate", "verify": "validate",
		"simulate": "simulate", "preview": "simulate", "estimate": "simulate",
		"poll": "poll",
	}
	// A bare trailing path segment with one of these verbs names the action;
	// the segment before it names the resource (/field/search, /transactions/get).
	trailingVerbs = map[string]string{
		"search": "search", "find": "search", "query": "search", "lookup": "search",
		"export": "export", "validate": "validate", "verify": "validate",
		"simulate": "simulate", "preview": "simulate", "estimate": "simulate", "poll": "poll",
		"cancel": "cancel", "approve": "approve", "execute": "execute", "send": "send", "reserve": "reserve",
		"get": "get", "read": "get", "fetch": "get", "retrieve": "get", "list": "list",
		"create": "create", "add": "create", "update": "update", "edit": "update",
		"replace": "replace", "upsert": "upsert", "delete": "delete", "remove": "delete",
	}
	formatSuffix = regexp.MustCompile(`(?i)\.(json|xml|yaml|yml|csv|txt|html|atom|rss)$`)
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

func isParamSeg(s string) bool {
	return len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}'
}

// cleanSegment removes a format suffix (.json) and an OData key ("(…)").
func cleanSegment(s string) string {
	s = formatSuffix.ReplaceAllString(s, "")
	if i := strings.IndexByte(s, '('); i > 0 && strings.HasSuffix(s, ")") {
		s = s[:i]
	}
	return s
}

// baseNames are the names derived from one operation's path, method and operationId.
type baseNames struct {
	Resource  string // the resource token as written in the path (CLI word)
	Action    string // the naming action (id and CLI word)
	ID        string
	Canonical string
	CLI       string
	Weak      string // non-empty: why the name is weak (weak_operation_name)
}

// deriveNames implements the naming rules of the reference (§b). grammar is
// the manifest's path_grammar ("" when it has none).
func deriveNames(service, path, method, operationID, grammar string) baseNames {
	segs := splitPath(path)
	custom := ""
	if n := len(segs); n > 0 {
		last := segs[n-1]
		if i := strings.LastIndexByte(last, ':'); i >= 0 && i < len(last)-1 && !strings.ContainsAny(last[i:], "{}") {
			custom = last[i+1:]
			segs[n-1] = last[:i]
			if segs[n-1] == "" {
				segs = segs[:n-1]
			}
		}
	}
	endsInParam := len(segs) > 0 && isParamSeg(segs[len(segs)-1])
	idx := lastLiteral(segs, len(segs))
	raw := ""
	if idx >= 0 {
		raw = cleanSegment(segs[idx])
	}
	rpcAction, verbAction := "", ""
	if res, act, ok := rpcDotted(raw, grammar); ok {
		rpcAction, raw = act, res
	} else if idx >= 0 && idx == len(segs)-1 && custom == "" {
		if v, ok := trailingVerbs[strings.ToLower(raw)]; ok {
			if j := lastLiteral(segs, idx); j >= 0 {
				verbAction = v
				raw = cleanSegment(segs[j])
				endsInParam = isParamSeg(segs[idx-1])
			}
		}
	}
	opWords := asciiWords(operationID)
	first := ""
	if len(opWords) > 0 {
		first = opWords[0]
	}
	var action string
	switch method {
	case "GET", "HEAD":
		action = "list"
		if endsInParam {
			action = "get"
		}
	case "POST":
		action = "create"
		switch {
		case postUpdateWords[first]:
			action = "update"
		case postDeleteWords[first]:
			action = "delete"
		}
	case "PUT":
		action = "replace"
		if first == "upsert" {
			action = "upsert"
		}
	case "PATCH":
		action = "update"
		if first == "upsert" {
			action = "upsert"
		}
	case "DELETE":
		action = "delete"
	default:
		action = naming.Snake(method)
	}
	if method == "GET" || method == "HEAD" || method == "POST" {
		if a, ok := readIntentWords[first]; ok {
			action = a
		}
	}
	switch {
	case custom != "":
		action = nameSnake(custom)
	case rpcAction != "":
		action = rpcAction
	case verbAction != "":
		action = verbAction
	}
	if action == "" {
		action = "call"
	}
	resSnake := nameSnake(raw)
	if resSnake == "" {
		raw, resSnake = "root", "root"
	}
	b := baseNames{Resource: raw, Action: action}
	b.ID = service + "." + resSnake + "." + action
	b.CLI = service + " " + raw + " " + action
	if c := strings.Join(opWords, "_"); c != "" {
		b.Canonical = c
		if len(opWords) == 1 {
			b.Weak = "operationId " + quote(operationID) + " is a single word; its tool name " + quote(service+"_"+c) + " says little about what it does"
		}
	} else {
		b.Canonical = action + "_" + Singularize(resSnake)
		b.Weak = "the operation has no operationId; its canonical name " + quote(b.Canonical) + " comes from its path"
		if operationID != "" {
			b.Weak = "operationId " + quote(operationID) + " has no ASCII letter or digit to name it by; its canonical name " + quote(b.Canonical) + " comes from its path"
		}
	}
	return b
}

var identPart = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// rpcMethodWords are last parts of a dotted segment that make it an RPC
// method name (conversations.list, users.info) rather than a dotted resource
// name (apiextensions.k8s.io).
var rpcMethodWords = set("list", "info", "get", "create", "update", "delete", "remove", "add", "set", "post",
	"upload", "open", "close", "archive", "unarchive", "invite", "join", "kick", "leave", "rename", "history",
	"replies", "members", "mark", "search", "lookup", "send", "start", "end", "test", "revoke", "read", "write",
	"query", "cancel", "approve", "edit", "fetch", "publish", "schedule")

// rpcDotted splits an RPC dotted segment such as chat.postMessage into the
// resource (chat) and the action (post_message). Under path_grammar
// rpc_dotted every dotted identifier segment splits; under resource_grammar
// and rpc_plain none does; otherwise a segment splits when its parts are
// identifiers and its last part is camelCase or a known method word.
func rpcDotted(seg, grammar string) (resource, action string, ok bool) {
	parts := strings.Split(seg, ".")
	if len(parts) < 2 || grammar == "resource_grammar" || grammar == "rpc_plain" {
		return "", "", false
	}
	for _, p := range parts {
		if !identPart.MatchString(p) {
			return "", "", false
		}
	}
	last := parts[len(parts)-1]
	if grammar != "rpc_dotted" && strings.ToLower(last) == last && !rpcMethodWords[last] {
		return "", "", false
	}
	return strings.Join(parts[:len(parts)-1], "."), naming.Snake(last), true
}

func splitPath(path string) []string {
	var segs []string
	for _, s := range strings.Split(path, "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	return segs
}

// lastLiteral returns the index of the last segment before end that is not a {param}, or -1.
func lastLiteral(segs []string, end int) int {
	for i := end - 1; i >= 0; i-- {
		if !isParamSeg(segs[i]) && cleanSegment(segs[i]) != "" {
			return i
		}
	}
	return -1
}

// pathTokens are the qualifier candidates of an operation (collide.go):
// its literal path segments and a custom method's name, snake_case, in
// path order, each once. Parameters and the method are not among them: a
// suffix names where an operation is, and the route hash tells apart what
// the segments do not.
func pathTokens(path string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(t string) {
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, s := range splitPath(path) {
		custom := ""
		if i := strings.LastIndexByte(s, ':'); i >= 0 && !strings.ContainsAny(s[i:], "{}") {
			custom, s = s[i+1:], s[:i]
		}
		if !isParamSeg(s) {
			add(nameSnake(cleanSegment(s)))
		}
		add(nameSnake(custom))
	}
	return out
}

func quote(s string) string { return `"` + s + `"` }
