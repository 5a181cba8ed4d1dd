package discover

import (
	"encoding/json"
	"math"
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
// name, operation_id, title, summary, effect, confirm_required, then, when
// set, score, needs and producer_for.
type ResultJSON struct {
	Name            string `json:"name"`
	OperationID     string `json:"operation_id"`
	Title           string `json:"title"`
	Summary         string `json:"summary"`
	Effect          string `json:"effect"`
	ConfirmRequired bool   `json:"confirm_required"`
	// Score is the ranking score, rounded to three decimals (absent in a
	// listing, and for a producer added for another result).
	Score float64 `json:"score,omitempty"`
	// Needs lists, per identifier input, the tools whose answers produce
	// it, as far as the caller may see them.
	Needs []NeedJSON `json:"needs,omitempty"`
	// ProducerFor names the results this tool was returned for: it
	// produces an identifier they need.
	ProducerFor []string `json:"producer_for,omitempty"`
}

// NeedJSON is one identifier input and the tools that produce it.
type NeedJSON struct {
	Argument string   `json:"argument"`
	From     []string `json:"from"`
}

// JSON returns the result's wire shape.
func (r Result) JSON() ResultJSON {
	e := r.Entry
	out := ResultJSON{Name: e.Name, OperationID: e.OperationID, Title: e.Title, Summary: e.Summary(),
		Effect: e.Effect, ConfirmRequired: e.ConfirmRequired, Score: math.Round(r.Score*1000) / 1000, ProducerFor: r.ProducerFor,
		Needs: NeedsJSON(r.Needs)}
	return out
}

// NeedsJSON is the wire shape of producer links, producers by served
// name: [{"argument":"contact_id","from":["crm__search_contacts"]}], nil
// when there are none.
func NeedsJSON(ns []Need) []NeedJSON {
	var out []NeedJSON
	for _, n := range ns {
		nj := NeedJSON{Argument: n.Argument, From: make([]string, len(n.From))}
		for i, p := range n.From {
			nj.From[i] = p.Name
		}
		out = append(out, nj)
	}
	return out
}

// SearchResponse is the anvil_search result: {"tools": [...]}, never null,
// and "weak": true when the best result matches less than half of what
// the query asks (or nothing: then the results are only a starting point).
type SearchResponse struct {
	Tools []ResultJSON `json:"tools"`
	Weak  bool         `json:"weak,omitempty"`
}

// Response builds the anvil_search result of a ranked list.
func Response(rs []Result) SearchResponse {
	out := SearchResponse{Tools: make([]ResultJSON, len(rs))}
	for i, r := range rs {
		out.Tools[i] = r.JSON()
	}
	if len(rs) > 0 && rs[0].Weak {
		out.Weak = true
	}
	return out
}

// MarshalResponse renders {"tools":[{"name",...,"confirm_required"}...]}
// with the keys in that order.
func MarshalResponse(rs []Result) ([]byte, error) {
	return json.Marshal(Response(rs))
}
