package handler

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/upstream"
)

// generatedRequest builds GET /repos/{owner}/r as a generated builder does
// for a string path input of the given style.
func generatedRequest(owner string, style air.ParamStyle) (*http.Request, error) {
	b := NewBuilder(ParseBase("https://api.example/v3"), "t.get")
	b.Path("/repos/")
	switch style {
	case air.StyleLabel:
		b.Path(".")
	case air.StyleMatrix:
		b.PathMatrix("owner")
	}
	b.PathParam("owner", Of(owner))
	b.Path("/r")
	return b.Do(context.Background(), "GET", "application/json")
}

func dotOp(style air.ParamStyle) *air.Operation {
	return &air.Operation{
		ID:        "t.get",
		SourceRef: air.SourceRef{Path: "/repos/{owner}/r", Method: "GET"},
		Input: air.Input{Params: []air.Param{
			{Name: "owner", Key: "owner", In: "path", Required: true, Style: style},
		}},
	}
}

// TestGeneratedDotSegmentsRefused is issue 30's regression test for the
// generated gateway: a path value that is, or decodes to, a dot segment is
// a validation_error there as in the AIR-driven handler.
func TestGeneratedDotSegmentsRefused(t *testing.T) {
	for _, owner := range []string{"..", ".", "%2E%2E", "../x", "..;x"} {
		_, err := generatedRequest(owner, "")
		var e *envelope.Error
		if !errors.As(err, &e) || e.Code != envelope.ValidationError || e.Message != upstream.DotSegmentMessage {
			t.Errorf("owner %q: %v", owner, err)
		}
	}
}

// TestGeneratedAgreesOnDotSegments: for every string path value made of up
// to three pieces that decode to dots, slashes, backslashes and parameters,
// in every style, the generated builders' NewRequest and the AIR-driven
// upstream.BuildRequest both send the same URL or both refuse it with the
// same validation_error (handler.Builder.Do checks the path as
// upstream.BuildRequest does). (upstream's FuzzDotSegmentsRefused fuzzes the
// check itself; this runs in every go test, with no fuzzing build.)
func TestGeneratedAgreesOnDotSegments(t *testing.T) {
	pieces := []string{"", ".", "..", "%2E", "%252E", "/", `\`, ";x", "a", "%2F"}
	styles := []air.ParamStyle{"", air.StyleSimple, air.StyleLabel, air.StyleMatrix}
	refused := 0
	for _, a := range pieces {
		for _, b := range pieces {
			for _, c := range pieces {
				owner := a + b + c
				if owner == "" {
					continue // both refuse it earlier, with their own "must not be empty"
				}
				for _, style := range styles {
					gen, gerr := generatedRequest(owner, style)
					req, aerr := upstream.BuildRequest(context.Background(), "https://api.example/v3", dotOp(style), map[string]any{"owner": owner})
					switch {
					case (gerr == nil) != (aerr == nil):
						t.Fatalf("%q %s: generated %v, AIR %v", owner, style, gerr, aerr)
					case gerr != nil:
						refused++
						if g, a := upstream.AsEnvelope(gerr), upstream.AsEnvelope(aerr); g.Code != a.Code || g.Message != a.Message {
							t.Fatalf("%q %s: generated %v, AIR %v", owner, style, g, a)
						}
					case gen.URL.String() != req.URL.String():
						t.Fatalf("%q %s: generated %s, AIR %s", owner, style, gen.URL, req.URL)
					}
				}
			}
		}
	}
	if refused == 0 {
		t.Fatal("no value was refused: the check did not run")
	}
}
