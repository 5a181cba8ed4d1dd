package specdiff

import (
	"slices"
	"strings"

	"github.com/anvil-dev/anvil/compiler/diff"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

// Surfaces returns each operation's diff.Surface, by diff.SurfaceKey: the
// security alternatives that apply to it (its own, else the document's),
// with each scheme's kind and the scopes asked, and the media types of its
// request body and success responses. Load the spec with
// openapi.Options.AllMediaTypes so that every media type is there; the
// schemas are shared with spec, not copied.
func Surfaces(spec *openapi.Spec) map[string]*diff.Surface {
	out := make(map[string]*diff.Surface, len(spec.Operations))
	for _, op := range spec.Operations {
		s := &diff.Surface{Defs: spec.Schemas}
		reqs := spec.Security
		if op.HasSecurity {
			reqs = op.Security
		}
		for _, r := range reqs {
			s.Security = append(s.Security, requirement(spec, r))
		}
		if b := op.RequestBody; b != nil {
			s.Request = &diff.Body{Media: media(b.ContentType, b.Schema, b.Others)}
		}
		for _, r := range op.Responses {
			if strings.HasPrefix(r.Status, "2") {
				s.Responses = append(s.Responses, diff.Response{Status: r.Status, Media: media(r.ContentType, r.Schema, r.Others)})
			}
		}
		out[diff.SurfaceKey(op.Method, op.Path)] = s
	}
	return out
}

func requirement(spec *openapi.Spec, r openapi.SecurityRequirement) diff.Requirement {
	out := make(diff.Requirement, 0, len(r))
	for _, u := range r {
		sc := slices.Clone(u.Scopes)
		slices.Sort(sc)
		out = append(out, diff.SchemeUse{Scheme: u.Scheme, Kind: schemeKind(spec.SecuritySchemes[u.Scheme]), Scopes: slices.Compact(sc)})
	}
	slices.SortFunc(out, func(a, b diff.SchemeUse) int { return strings.Compare(a.Scheme, b.Scheme) })
	return out
}

// schemeKind names the credential a scheme takes and where it travels.
func schemeKind(s *openapi.SecurityScheme) string {
	if s == nil {
		return "undeclared"
	}
	switch s.Type {
	case "apiKey":
		return "apiKey " + s.In + " " + s.ParamName
	case "http":
		return "http " + strings.ToLower(s.Scheme)
	}
	return s.Type
}

func media(ct string, schema *air.Schema, others []openapi.Media) []diff.Media {
	var out []diff.Media
	if ct != "" {
		out = append(out, diff.Media{ContentType: ct, Schema: schema})
	}
	for _, m := range others {
		out = append(out, diff.Media{ContentType: m.ContentType, Schema: m.Schema})
	}
	return out
}
