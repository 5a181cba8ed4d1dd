package diff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
)

// Surface is what a caller of one operation depends on beyond its AIR
// contract, as the spec declares it: every security alternative with its
// scopes (AIR keeps the one the gateway uses), and every media type of the
// request body and of each success response (AIR keeps the one it serves).
// compiler/diff/specdiff builds it from the loaded spec; bundles have none.
type Surface struct {
	// Security holds the alternatives, any one of which authorises a
	// call; empty means the operation needs no authentication.
	Security []Requirement
	// Request is nil when the operation takes no body.
	Request *Body
	// Responses are the success (2XX) responses, in the order written.
	Responses []Response
	// Defs resolves the "#/$defs/<name>" references of the schemas above
	// (the spec's own named schemas, not AIR's).
	Defs map[string]*air.Schema
}

// Requirement is one security alternative: every scheme of it applies
// together.
type Requirement []SchemeUse

// SchemeUse is one scheme of an alternative and the scopes it asks for.
// Kind says what credential the scheme takes and where it travels
// ("oauth2", "apiKey header X-Token", "http bearer"): the same name with
// another kind is another credential.
type SchemeUse struct {
	Scheme string
	Kind   string
	Scopes []string // sorted
}

// Body is a request body's media types.
type Body struct {
	Media []Media
}

// Response is one success response's media types.
type Response struct {
	Status string
	Media  []Media
}

// Media is one media type and its schema (nil when it declares none).
type Media struct {
	ContentType string
	Schema      *air.Schema
}

// SurfaceKey is the key of an operation's Surface: its method and path as
// the spec writes them.
func SurfaceKey(method, path string) string { return method + " " + path }

func (u SchemeUse) String() string {
	s := u.Scheme + " (" + u.Kind
	if len(u.Scopes) > 0 {
		s += ": " + strings.Join(u.Scopes, ", ")
	}
	return s + ")"
}

func (r Requirement) String() string {
	if len(r) == 0 {
		return "{} (anonymous)"
	}
	parts := make([]string, len(r))
	for i, u := range r {
		parts[i] = u.String()
	}
	return strings.Join(parts, " + ")
}

// satisfies reports whether a caller holding the credentials and scopes of
// have meets need: every scheme need names, of the same kind, with no
// scope have lacks.
func satisfies(have, need Requirement) bool {
	for _, u := range need {
		ok := false
		for _, h := range have {
			if h.Scheme == u.Scheme && h.Kind == u.Kind && subset(u.Scopes, h.Scopes) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// alternatives names up to four requirements.
func alternatives(rs []Requirement) string {
	if len(rs) == 0 {
		return "no authentication"
	}
	parts := make([]string, 0, len(rs))
	for i, r := range rs {
		if i == 4 {
			parts = append(parts, fmt.Sprintf("and %d more", len(rs)-4))
			break
		}
		parts = append(parts, r.String())
	}
	return strings.Join(parts, " | ")
}

// compareSecurity reports each old alternative that no new one is
// satisfied by (its callers lose access: breaking) and each new
// alternative no old one already met (non-breaking: a new way in).
func compareSecurity(o, n []Requirement) []Finding {
	var out []Finding
	if len(n) == 0 {
		if len(o) > 0 {
			out = append(out, Finding{AuthChanged, false, "security: no authentication needed any more (was " + alternatives(o) + ")"})
		}
		return out
	}
	if len(o) == 0 {
		return append(out, Finding{AuthChanged, true, "security: authentication now required: " + alternatives(n)})
	}
	for _, have := range o {
		ok := false
		for _, need := range n {
			if satisfies(have, need) {
				ok = true
				break
			}
		}
		if !ok {
			out = append(out, Finding{AuthChanged, true, fmt.Sprintf("security: callers authorised by %s are not any more (now: %s)", have, alternatives(n))})
		}
	}
	for _, need := range n {
		met := false
		for _, have := range o {
			if satisfies(have, need) {
				met = true
				break
			}
		}
		if !met {
			out = append(out, Finding{AuthChanged, false, "security: new alternative " + need.String()})
		}
	}
	if len(out) == 0 && alternativeSet(o) != alternativeSet(n) {
		// Fewer scopes or schemes asked: every caller still gets in.
		out = append(out, Finding{AuthChanged, false, "security: " + alternatives(o) + " → " + alternatives(n)})
	}
	return out
}

// alternativeSet is the requirements as one text, in a fixed order.
func alternativeSet(rs []Requirement) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	slices.Sort(parts)
	return strings.Join(parts, " | ")
}

// primary names the media type AIR's contract compares on each side, so
// the surface comparison does not report it twice.
type primary struct {
	inType, outType string
	outStatus       int
}

func primaryOf(op *air.Operation) primary {
	p := primary{outType: op.Output.ContentType, outStatus: op.Output.Status}
	if op.Input.Body != nil {
		p.inType = op.Input.Body.ContentType
	}
	return p
}

// compareSurfaces returns what changed between two operations' surfaces,
// leaving out the request and response media types AIR's contract already
// compared (the same primary type on both sides).
//
// airAuth says that AIR's contract comparison already reported an auth
// change: when each side has a single alternative, that alternative is the
// one AIR holds, and the security comparison would only repeat it.
func compareSurfaces(o, n *Surface, op, np primary, m *memo, airAuth bool) []Finding {
	var out []Finding
	if !airAuth || len(o.Security) > 1 || len(n.Security) > 1 {
		out = compareSecurity(o.Security, n.Security)
	}
	if o.Request != nil && n.Request != nil {
		for _, om := range o.Request.Media {
			nm := findMedia(n.Request.Media, om.ContentType)
			switch {
			case nm == nil:
				out = append(out, Finding{InputMediaTypeRemoved, true, fmt.Sprintf("input: media type %s no longer accepted", om.ContentType)})
			case om.ContentType == op.inType && om.ContentType == np.inType:
			default:
				out = append(out, schemaFindings(m, input, "input ("+om.ContentType+")", om.Schema, nm.Schema)...)
			}
		}
	}
	for _, or := range o.Responses {
		nr := findResponse(n.Responses, or.Status)
		if nr == nil {
			if or.Status != fmt.Sprint(op.outStatus) { // AIR reports its own success status
				out = append(out, Finding{OutputStatusChanged, true, fmt.Sprintf("response %s no longer declared", or.Status)})
			}
			continue
		}
		for _, om := range or.Media {
			nm := findMedia(nr.Media, om.ContentType)
			switch {
			case nm == nil:
				out = append(out, Finding{OutputMediaTypeRemoved, true, fmt.Sprintf("response %s: media type %s removed", or.Status, om.ContentType)})
			case or.Status == fmt.Sprint(op.outStatus) && or.Status == fmt.Sprint(np.outStatus) && om.ContentType == op.outType && om.ContentType == np.outType:
			default:
				out = append(out, schemaFindings(m, output, "response "+or.Status+" ("+om.ContentType+")", om.Schema, nm.Schema)...)
			}
		}
	}
	return out
}

func findMedia(l []Media, ct string) *Media {
	for i := range l {
		if strings.EqualFold(l[i].ContentType, ct) {
			return &l[i]
		}
	}
	return nil
}

func findResponse(l []Response, status string) *Response {
	for i := range l {
		if strings.EqualFold(l[i].Status, status) {
			return &l[i]
		}
	}
	return nil
}

// schemaFindings compares two schemas of one direction under a label.
func schemaFindings(m *memo, dir direction, label string, o, n *air.Schema) []Finding {
	if o == nil || n == nil {
		return nil
	}
	var out []Finding
	for _, f := range compareSchemasAs(m, dir, label, o, n) {
		out = append(out, Finding{f.kind, f.breaking, f.detail})
	}
	return out
}
