package frontdoor

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/anvil-dev/anvil/runtime/discover"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/executor"
	"github.com/anvil-dev/anvil/runtime/fleet"
)

// serveTools handles GET /tools for an authenticated caller: without
// search, every tool the caller's grant shows, in name order; with
// ?search=<text>[&limit=<n>][&connector=<id>], the same ranking as
// anvil_search. Both answer {"tools":[{"name","operation_id","title",
// "summary","effect","confirm_required"}]}.
func (g *Gateway) serveTools(w http.ResponseWriter, r *http.Request, p *executor.Principal, _ string) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		refuseRequest(w, r, func(w http.ResponseWriter) {
			envelope.WriteSimple(w, http.StatusMethodNotAllowed, "method_not_allowed", "Use GET for /tools.")
		})
		return
	}
	q := r.URL.Query()
	for k := range q {
		if k != "search" && k != "limit" && k != "connector" {
			writeEnvelope(w, &envelope.Error{Code: envelope.ValidationError, Message: "Unknown query parameter " + strconv.Quote(k) + "; /tools takes search, limit and connector."}, nil)
			return
		}
	}
	var limit *int
	if v, ok := q["limit"]; ok {
		n, err := strconv.Atoi(v[len(v)-1]) // the last of repeated values wins, as for search
		if err != nil {
			writeEnvelope(w, &envelope.Error{Code: envelope.ValidationError, Message: "limit must be an integer."}, nil)
			return
		}
		limit = &n
	}
	if _, ok := q["search"]; ok {
		b, e := search(g.Fleet(), p, q.Get("search"), q.Get("connector"), limit)
		if e != nil {
			writeEnvelope(w, e, nil)
			return
		}
		writeJSON(w, http.StatusOK, b)
		return
	}
	if limit != nil {
		writeEnvelope(w, &envelope.Error{Code: envelope.ValidationError, Message: "limit applies to a search (/tools?search=<text>&limit=<n>)."}, nil)
		return
	}
	b, e := listAll(g.Fleet(), p, q.Get("connector"))
	if e != nil {
		writeEnvelope(w, e, nil)
		return
	}
	writeJSON(w, http.StatusOK, b)
}

// listAll renders every tool p's grant shows (of one connector when set),
// in name order, in the search result's shape.
func listAll(f *fleet.Fleet, p *executor.Principal, connector string) ([]byte, *envelope.Error) {
	if connector != "" && f.Connector(connector) == nil {
		return nil, &envelope.Error{Code: envelope.ValidationError, Message: "No connector " + strconv.Quote(connector) + " is served."}
	}
	entries := f.SearchIndex().Entries()
	rs := make([]discover.Result, 0, len(entries))
	for i := range entries {
		e := &entries[i]
		if (connector == "" || e.Connector == connector) && visibleTo(p, f.Tool(e.Name)) {
			rs = append(rs, discover.Result{Entry: e})
		}
	}
	b, err := discover.MarshalResponse(rs)
	if err != nil {
		return nil, &envelope.Error{Code: envelope.InternalError, Message: "The tool list could not be encoded."}
	}
	return bytes.TrimSpace(b), nil
}

// unknownToolError is the not_found refusal e of a call to a tool the
// gateway does not serve, naming the served tools (that p may see) it most
// likely meant, and then hint (where to find the served tools).
func unknownToolError(f *fleet.Fleet, p *executor.Principal, name string, e *envelope.Error, hint string) *envelope.Error {
	s := f.Suggest(name, func(t *fleet.Tool) bool { return visibleTo(p, t) })
	if len(s) == 0 {
		return e
	}
	cp := *e
	msg := "No tool named " + name + " is served by this gateway. Did you mean "
	for i, n := range s {
		switch {
		case i == 0:
		case i == len(s)-1:
			msg += " or "
		default:
			msg += ", "
		}
		msg += n
	}
	cp.Message = msg + "? " + hint
	return &cp
}
