package lower

import (
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/diag"
	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/compiler/openapi"
	"github.com/anvil-dev/anvil/runtime/air"
)

func pinSpec(ops ...*openapi.Operation) *openapi.Spec {
	return &openapi.Spec{Kind: openapi.KindOpenAPI30, File: "api.yaml", Title: "Shop", Version: "1", Operations: ops}
}

// pinOf is the pin anvil.lock would record for op.
func pinOf(op *air.Operation) Pin {
	return Pin{Method: op.SourceRef.Method, Path: op.SourceRef.Path, OperationID: op.SourceRef.OperationID,
		ID: op.ID, CanonicalName: op.CanonicalName, Tool: op.MCP.ToolName, CLI: op.CLI.Command}
}

func namesOf(op *air.Operation) string {
	return op.ID + " | " + op.MCP.ToolName + " | " + op.CLI.Command
}

func codesOf(ds diag.List, code string) []string {
	var out []string
	for _, d := range ds {
		if d.Code == code {
			out = append(out, d.Message)
		}
	}
	return out
}

// TestPinsKeepNames: an operation joining an approved operation's
// collision group qualifies the newcomer only; a pin is not applied when
// the operation's operationId changed; the manifest's name override
// outranks a pinned tool name (never the id); an id-only pin (a v2 lock)
// keeps the id; a pin that does not fit today's rules is ignored with a
// warning.
func TestPinsKeepNames(t *testing.T) {
	repo := &openapi.Operation{Path: "/repos/{owner}/{repo}/orders", Method: "GET", OperationID: "listRepoOrders"}
	before, _ := Lower(pinSpec(repo), nil, &Options{ServiceID: "shop"})
	if got := namesOf(&before.Operations[0]); got != "shop.orders.list | shop_list_repo_orders | shop orders list" {
		t.Fatalf("alone: %s", got)
	}
	pin := pinOf(&before.Operations[0])

	org := &openapi.Operation{Path: "/orgs/{org}/orders", Method: "GET", OperationID: "listOrgOrders"}
	fresh, _ := Lower(pinSpec(repo, org), nil, &Options{ServiceID: "shop"})
	if got := namesOf(&fresh.Operations[0]); got != "shop.orders.list_repos | shop_list_repo_orders | shop orders list_repos" {
		t.Errorf("fresh, the group grew: %s", got)
	}
	pinned, ds := Lower(pinSpec(repo, org), nil, &Options{ServiceID: "shop", Pins: []Pin{pin}})
	if got := namesOf(&pinned.Operations[0]); got != "shop.orders.list | shop_list_repo_orders | shop orders list" {
		t.Errorf("pinned: %s", got)
	}
	if got := namesOf(&pinned.Operations[1]); got != "shop.orders.list_orgs | shop_list_org_orders | shop orders list_orgs" {
		t.Errorf("the newcomer: %s", got)
	}
	if m := codesOf(ds, CodePinned); len(m) != 1 || m[0] != `anvil.lock pins this operation's names: CLI command "shop orders list" (derived today: "shop orders list_repos"), id "shop.orders.list" (derived today: "shop.orders.list_repos")` {
		t.Errorf("naming_pinned: %q", m)
	}

	// The operationId changed: the operation itself changed, so it is named afresh.
	renamed := *repo
	renamed.OperationID = "listOrdersOfRepo"
	doc, _ := Lower(pinSpec(&renamed, org), nil, &Options{ServiceID: "shop", Pins: []Pin{pin}})
	if got := namesOf(&doc.Operations[0]); got != "shop.orders.list_repos | shop_list_orders_of_repo | shop orders list_repos" {
		t.Errorf("operationId changed: %s", got)
	}

	// A v2 lock pins the id alone, whatever the operationId.
	doc, _ = Lower(pinSpec(&renamed, org), nil, &Options{ServiceID: "shop", Pins: []Pin{{Method: "GET", Path: "/repos/{o}/{r}/orders", ID: "shop.orders.list"}}})
	if got := namesOf(&doc.Operations[0]); got != "shop.orders.list | shop_list_orders_of_repo | shop orders list_repos" {
		t.Errorf("id-only pin (parameter names aside): %s", got)
	}

	// The manifest's name override renames the tool and CLI, not the id.
	man := &manifest.Manifest{File: "anvil.yaml", Service: &manifest.Service{Name: "shop"}, Operations: []*manifest.OperationEntry{
		{Key: "listRepoOrders", Op: &manifest.Operation{Name: &manifest.Name{Resource: "purchases", Verb: "browse"}}},
	}}
	doc, _ = Lower(pinSpec(repo, org), man, &Options{Pins: []Pin{pin}})
	if got := namesOf(&doc.Operations[0]); got != "shop.orders.list | shop_browse_purchase | shop purchases browse" {
		t.Errorf("override: %s", got)
	}

	// Pins that cannot be kept.
	for what, p := range map[string]Pin{
		"the id is not an AIR id of service":   {ID: "other.orders.list"},
		"the canonical name is not snake_case": {CanonicalName: "List-Orders", Tool: "shop_List-Orders"},
		"the tool name is not":                 {Tool: "shop_other"},
		"longer than the served-name budget":   {CanonicalName: strings.Repeat("x", 60), Tool: "shop_" + strings.Repeat("x", 60)},
		"the CLI command is not one":           {CLI: "shop\norders list"},
	} {
		bad := pin
		if p.ID != "" {
			bad.ID = p.ID
		}
		if p.CanonicalName != "" {
			bad.CanonicalName = p.CanonicalName
		}
		if p.Tool != "" {
			bad.Tool = p.Tool
		}
		if p.CLI != "" {
			bad.CLI = p.CLI
		}
		doc, ds := Lower(pinSpec(repo, org), nil, &Options{ServiceID: "shop", Pins: []Pin{bad}})
		if got := namesOf(&doc.Operations[0]); got != namesOf(&fresh.Operations[0]) {
			t.Errorf("%s: the pin applied: %s", what, got)
		}
		if m := codesOf(ds, CodePinIgnored); len(m) != 1 || !strings.Contains(m[0], what) {
			t.Errorf("%s: naming_pin_ignored %q", what, m)
		}
	}

	// Two pins of one route: the first applies; a route with none is fresh.
	doc, _ = Lower(pinSpec(repo, org), nil, &Options{ServiceID: "shop", Pins: []Pin{pin, {Method: "GET", Path: repo.Path, ID: "shop.orders.other"}, {Method: "GET", Path: "/gone", ID: "shop.gone.list"}}})
	if got := namesOf(&doc.Operations[0]); got != "shop.orders.list | shop_list_repo_orders | shop orders list" {
		t.Errorf("two pins: %s", got)
	}
}
