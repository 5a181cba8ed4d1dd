package main

import (
	"bytes"
	"path/filepath"
	"sort"
	"testing"

	"github.com/anvil-dev/anvil/compiler/emit/files"
	"github.com/anvil-dev/anvil/golden"
)

// gatewayFixture is the compiled github-mini bundle the runtime/gateway tests
// serve (they may not import the compiler). Its server stays
// https://api.github.example; the tests point it at their mock upstream.
const gatewayFixture = "../../runtime/gateway/testdata/workspace/github"

// TestGatewayFixture keeps runtime/gateway's committed bundle equal to what
// compile makes of the example; ANVIL_UPDATE_GOLDEN=1 (make golden) rewrites it.
func TestGatewayFixture(t *testing.T) {
	got, err := files.Read(compileExample(t))
	if err != nil {
		t.Fatal(err)
	}
	if golden.Updating() {
		if err := got.WriteTo(gatewayFixture); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := files.Read(gatewayFixture)
	if err != nil {
		t.Fatalf("%v (run `make golden` to create %s)", err, filepath.Clean(gatewayFixture))
	}
	var names []string
	for n := range got {
		names = append(names, n)
	}
	for n := range want {
		if _, ok := got[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		if !bytes.Equal(got[n].Data, want[n].Data) {
			t.Errorf("%s/%s differs from what compile writes (run `make golden`)", filepath.Clean(gatewayFixture), n)
		}
	}
}
