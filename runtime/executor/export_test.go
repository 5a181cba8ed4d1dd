package executor

import (
	"encoding/json"
	"testing"

	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/handler"
)

// LedgerInputHash is the ledger's input hash of a call of tool with args,
// as execute computes it (over the checked arguments).
func LedgerInputHash(t testing.TB, f *fleet.Fleet, tool, args string) string {
	t.Helper()
	tl := f.Tool(tool)
	in, ok := tl.Handler.Decode(json.RawMessage(args))
	if !ok {
		t.Fatal("arguments are not an object")
	}
	if err := handler.Prepare(tl.Handler); err != nil {
		t.Fatal(err)
	}
	in, problem, ok := tl.Handler.Check(in)
	if !ok {
		t.Fatal(problem)
	}
	return ledgerInputHash(in)
}
