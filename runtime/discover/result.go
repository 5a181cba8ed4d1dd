package discover

import (
	"encoding/json"
	"strings"
)

// Summary is the entry's one-line summary: the first paragraph of its
// description trimmed to SummaryMax characters, or the title when there is
// no description.
func (e *Entry) Summary() string {
	d := strings.TrimSpace(e.Description)
	if d == "" {
		return e.Title
	}
	if p := strings.Index(d, "\n\n"); p >= 0 {
		d = strings.TrimSpace(d[:p])
	}
	return TrimDescription(strings.Join(strings.Fields(d), " "), SummaryMax)
}

// ResultJSON is the wire shape of one search result, its keys in this order:
// name, operation_id, title, summary, effect, confirm_required.
type ResultJSON struct {
	Name            string `json:"name"`
	OperationID     string `json:"operation_id"`
	Title           string `json:"title"`
	Summary         string `json:"summary"`
	Effect          string `json:"effect"`
	ConfirmRequired bool   `json:"confirm_required"`
}

// JSON returns the result's wire shape.
func (r Result) JSON() ResultJSON {
	e := r.Entry
	return ResultJSON{Name: e.Name, OperationID: e.OperationID, Title: e.Title, Summary: e.Summary(),
		Effect: e.Effect, ConfirmRequired: e.ConfirmRequired}
}

// SearchResponse is the anvil_search result: {"tools": [...]}, never null.
type SearchResponse struct {
	Tools []ResultJSON `json:"tools"`
}

// Response builds the anvil_search result of a ranked list.
func Response(rs []Result) SearchResponse {
	out := SearchResponse{Tools: make([]ResultJSON, len(rs))}
	for i, r := range rs {
		out.Tools[i] = r.JSON()
	}
	return out
}

// MarshalResponse renders {"tools":[{"name",...,"confirm_required"}...]}
// with the keys in that order.
func MarshalResponse(rs []Result) ([]byte, error) {
	return json.Marshal(Response(rs))
}
