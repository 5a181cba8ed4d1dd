package main

import (
	"strings"
	"testing"
)

// TestScore: an oasdiff ERR operation is found when anvil diff reports it
// breaking (by its new route, or by the old route of a move), excluded
// only when every finding of it is a documented decision, and missed
// otherwise; anvil's other breaking operations are extra.
func TestScore(t *testing.T) {
	anvil := `{"changes": [
	  {"operation_id": "a.get", "method": "GET", "path": "/a/{id}", "kind": "input_type_changed", "breaking": true, "detail": "x"},
	  {"operation_id": "b.list", "method": "GET", "path": "/new/b", "kind": "operation_renamed", "breaking": true, "detail": "id b.old → b.list"},
	  {"operation_id": "b.list", "method": "GET", "path": "/new/b", "kind": "operation_renamed", "breaking": false, "detail": "moved from GET /old/b to GET /new/b"},
	  {"operation_id": "c.get", "method": "GET", "path": "/c", "kind": "comparison_incomplete", "breaking": false, "detail": "input: not compared"},
	  {"operation_id": "d.get", "method": "GET", "path": "/d", "kind": "output_property_removed", "breaking": true, "detail": "y"},
	  {"operation_id": "e.get", "method": "GET", "path": "/e", "kind": "output_property_added", "breaking": false, "detail": "z"}
	]}`
	oas := `[
	  {"id": "request-parameter-type-changed", "text": "t", "level": 3, "operation": "GET", "path": "/a/{name}"},
	  {"id": "api-path-removed-without-deprecation", "text": "gone", "level": 3, "operation": "GET", "path": "/old/b"},
	  {"id": "response-property-type-changed", "text": "t", "level": 3, "operation": "GET", "path": "/c"},
	  {"id": "request-parameter-type-changed", "text": "the ` + "`format`" + ` was changed from ` + "`none`" + ` to ` + "`int64`" + `", "level": 3, "operation": "GET", "path": "/f"},
	  {"id": "response-body-any-of-added", "text": "added", "level": 3, "operation": "GET", "path": "/e"},
	  {"id": "response-required-property-removed", "text": "gone", "level": 3, "operation": "POST", "path": "/g"},
	  {"id": "response-optional-property-removed", "text": "warn only", "level": 2, "operation": "GET", "path": "/h"}
	]`
	a, err := anvilBreaking([]byte(anvil))
	if err != nil {
		t.Fatal(err)
	}
	o, err := oasdiffErrors([]byte(oas))
	if err != nil {
		t.Fatal(err)
	}
	r := recallResult{excluded: map[string]int{}}
	score(&r, a, o)
	if r.oas != 6 || r.found != 3 || len(r.missed) != 1 || r.extra != 2 {
		t.Fatalf("oas %d found %d missed %v extra %d", r.oas, r.found, r.missed, r.extra)
	}
	if !strings.HasPrefix(r.missed[0], "POST /g: response-required-property-removed") {
		t.Errorf("missed %v", r.missed)
	}
	if r.excluded["width format added to an input"] != 1 || r.excluded["alternative changed in place"] != 1 {
		t.Errorf("excluded %v", r.excluded)
	}
	var b strings.Builder
	printRecall(&b, []recallResult{r})
	if !strings.Contains(b.String(), "found 3 of 4 (75.0%; 2 excluded") || !strings.Contains(b.String(), "MISSED POST /g") {
		t.Errorf("table:\n%s", b.String())
	}
}
