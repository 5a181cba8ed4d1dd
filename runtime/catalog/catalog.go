// Package catalog is the served tools as one caller may see them: the
// grant-filtered listing and search that REST (GET /tools) and MCP
// (anvil_search, tools/list) both answer, and the refusal of a call to a
// tool the gateway does not serve, naming the tools the caller most likely
// meant. The result encoding is runtime/discover's (discover.MarshalResponse),
// so every door answers the same bytes.
package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/anvil-dev/anvil/runtime/discover"
	"github.com/anvil-dev/anvil/runtime/envelope"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/identity"
)

// Visible reports whether tools/list, anvil_search and GET /tools show t
// to p (grant.List.Visible; everything to the unrestricted local caller,
// nothing to no caller).
func Visible(p *identity.Principal, t *fleet.Tool) bool {
	if p == nil {
		return false
	}
	return p.Unrestricted || p.Grants.Visible(t.GrantOp)
}

// Search runs a search for p; the limit must be 1 to discover.MaxLimit
// (discover.DefaultLimit when nil) and the connector, when set, served.
func Search(f *fleet.Fleet, p *identity.Principal, query, connector string, limit *int) ([]byte, *envelope.Error) {
	n := discover.DefaultLimit
	if limit != nil {
		if *limit < 1 || *limit > discover.MaxLimit {
			return nil, &envelope.Error{Code: envelope.ValidationError, Message: fmt.Sprintf("limit must be from 1 to %d.", discover.MaxLimit)}
		}
		n = *limit
	}
	if connector != "" && f.Connector(connector) == nil {
		return nil, &envelope.Error{Code: envelope.ValidationError, Message: fmt.Sprintf("No connector %q is served; served: %s.", connector, strings.Join(f.IDs(), ", "))}
	}
	rs := f.SearchIndex().Search(query, discover.Options{Connector: connector, Limit: n, Allow: func(e *discover.Entry) bool {
		return Visible(p, f.Tool(e.Name))
	}})
	b, err := discover.MarshalResponse(rs)
	if err != nil {
		return nil, &envelope.Error{Code: envelope.InternalError, Message: "The search result could not be encoded."}
	}
	return b, nil
}

// Describe renders anvil_describe's answer for p: {"tools":[...]} with each
// named tool's full tools/list entry (fleet.Tool.Listing) and, when the
// tool takes identifiers, its producer links as search shows them ("needs",
// discover.NeedsJSON, filtered by Visible through the one filter search
// uses, discover.Entry.VisibleNeeds). A name that is not served, or that
// p's grant hides, is a not_found refusal naming them all.
func Describe(f *fleet.Fleet, p *identity.Principal, names []string) ([]byte, *envelope.Error) {
	var buf bytes.Buffer
	buf.WriteString(`{"tools":[`)
	var unknown []string
	ix := f.SearchIndex()
	visible := func(e *discover.Entry) bool { return Visible(p, f.Tool(e.Name)) }
	for _, n := range names {
		t := f.Tool(n)
		if t == nil || !Visible(p, t) {
			unknown = append(unknown, n)
			continue
		}
		if len(unknown) > 0 {
			continue
		}
		if buf.Len() > len(`{"tools":[`) {
			buf.WriteByte(',')
		}
		listing := t.Listing()
		var needs []discover.NeedJSON
		if e := ix.Entry(n); e != nil {
			needs = discover.NeedsJSON(e.VisibleNeeds(visible))
		}
		if len(needs) == 0 {
			buf.Write(listing)
			continue
		}
		b, err := json.Marshal(needs)
		if err != nil || len(listing) < 2 || listing[len(listing)-1] != '}' {
			return nil, &envelope.Error{Code: envelope.InternalError, Message: "The tool description could not be encoded."}
		}
		buf.Write(listing[:len(listing)-1])
		buf.WriteString(`,"needs":`)
		buf.Write(b)
		buf.WriteByte('}')
	}
	if unknown != nil {
		return nil, &envelope.Error{Code: envelope.NotFound, Message: fmt.Sprintf("No tool named %s is served to you; find tools with anvil_search.", strings.Join(unknown, ", "))}
	}
	buf.WriteString(`]}`)
	return buf.Bytes(), nil
}

// List renders every tool p's grant shows (of one connector when set), in
// name order, in the search result's shape.
func List(f *fleet.Fleet, p *identity.Principal, connector string) ([]byte, *envelope.Error) {
	if connector != "" && f.Connector(connector) == nil {
		return nil, &envelope.Error{Code: envelope.ValidationError, Message: "No connector " + strconv.Quote(connector) + " is served."}
	}
	entries := f.SearchIndex().Entries()
	rs := make([]discover.Result, 0, len(entries))
	for i := range entries {
		e := &entries[i]
		if (connector == "" || e.Connector == connector) && Visible(p, f.Tool(e.Name)) {
			rs = append(rs, discover.Result{Entry: e})
		}
	}
	b, err := discover.MarshalResponse(rs)
	if err != nil {
		return nil, &envelope.Error{Code: envelope.InternalError, Message: "The tool list could not be encoded."}
	}
	return bytes.TrimSpace(b), nil
}

// UnknownTool is the not_found refusal e of a call to a tool the gateway
// does not serve, naming the served tools (that p may see) it most likely
// meant, and then hint (where to find the served tools). Without a
// suggestion it is e itself.
func UnknownTool(f *fleet.Fleet, p *identity.Principal, name string, e *envelope.Error, hint string) *envelope.Error {
	s := f.Suggest(name, func(t *fleet.Tool) bool { return Visible(p, t) })
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
