package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/compiler/lock"
	"github.com/anvil-dev/anvil/runtime/air"
)

const pinsOld = `openapi: 3.0.3
info: {title: Shop, version: "1"}
servers: [{url: "https://shop.example"}]
paths:
  /repos/{owner}/{repo}/orders:
    get:
      operationId: listRepoOrders
      parameters:
        - {name: owner, in: path, required: true, schema: {type: string}}
        - {name: repo, in: path, required: true, schema: {type: string}}
      responses: {"200": {description: ok}}
`

// pinsNew adds an operation to the approved one's collision group, and
// renames the approved one's operationId in the variant pinsRenamed.
const pinsNew = pinsOld + `  /orgs/{org}/orders:
    get:
      operationId: listOrgOrders
      parameters: [{name: org, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
`

// TestLockPinsNamesAcrossRecompile: anvil approve records the operation's
// names in anvil.lock (v3); a recompile after an operation joins its
// collision group keeps them (and the approval), the newcomer is
// qualified; anvil diff --manifest compiles both sides with the pins and
// reports no rename; a rename the lock cannot avoid (the operation's
// operationId changed) is reported as operation_renamed.
func TestLockPinsNamesAcrossRecompile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	oldSpec, newSpec := write("old.yaml", pinsOld), write("new.yaml", pinsNew)
	renamedSpec := write("renamed.yaml", strings.Replace(pinsNew, "listRepoOrders", "listOrdersOfRepo", 1))
	man := write("anvil.yaml", "service: {name: shop}\n")
	out := filepath.Join(dir, "shop")
	run := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := runCLI(t, "", args...)
		if code != 0 && !(args[0] == "diff" && code == 1) {
			t.Fatalf("%v: %d %s %s", args, code, stdout, stderr)
		}
		return stdout
	}
	run("compile", oldSpec, "--manifest", man, "--out", out)
	run("approve", out, "shop.orders.list")
	b, err := os.ReadFile(lock.PathFor(man))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"schema": "anvil.lock/v3"`) || !strings.Contains(string(b), `"tool": "shop_list_repo_orders"`) || !strings.Contains(string(b), `"cli": "shop orders list"`) {
		t.Fatalf("the lock does not record the names:\n%s", b)
	}

	run("compile", newSpec, "--manifest", man, "--out", out)
	doc, err := air.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, op := range doc.Operations {
		got[op.SourceRef.Path] = op.ID + " " + op.MCP.ToolName + " " + op.CLI.Command + " " + string(op.State)
	}
	if got["/repos/{owner}/{repo}/orders"] != "shop.orders.list shop_list_repo_orders shop orders list approved" ||
		got["/orgs/{org}/orders"] != "shop.orders.list_orgs shop_list_org_orders shop orders list_orgs review_required" {
		t.Errorf("after the recompile: %v", got)
	}

	var report struct {
		Changes []struct{ Kind, OperationID, Detail string } `json:"changes"`
	}
	decode := func(s string) {
		t.Helper()
		report.Changes = nil
		if err := json.Unmarshal([]byte(s), &report); err != nil {
			t.Fatalf("%v: %s", err, s)
		}
	}
	decode(run("diff", oldSpec, newSpec, "--manifest", man, "--format", "json", "--fail-on", "none"))
	for _, c := range report.Changes {
		if c.Kind == "operation_renamed" {
			t.Errorf("pinned, yet reported renamed: %+v", c)
		}
	}
	decode(run("diff", oldSpec, renamedSpec, "--manifest", man, "--format", "json", "--fail-on", "none"))
	renamed := 0
	for _, c := range report.Changes {
		if c.Kind == "operation_renamed" {
			renamed++
			if c.Detail != "id shop.orders.list → shop.orders.list_repos, tool shop_list_repo_orders → shop_list_orders_of_repo" {
				t.Errorf("rename detail %q", c.Detail)
			}
		}
	}
	if renamed != 1 {
		t.Errorf("%d renames reported, want the one the lock could not avoid: %+v", renamed, report.Changes)
	}
}
