package frontdoor_test

import (
	"errors"
	"testing"

	"github.com/anvil-dev/anvil/runtime/frontdoor"
	"github.com/anvil-dev/anvil/runtime/identity"
)

// TestIncompleteHallRefused: a hall without its identity or a door is
// never served (the gateway's tests, in runtime/serve, drive a complete
// one: routes, guards, credentials and purposes).
func TestIncompleteHallRefused(t *testing.T) {
	for _, h := range []frontdoor.Hall{{}, {Identity: identity.None{}}} {
		if handler, err := frontdoor.New(h); !errors.Is(err, frontdoor.ErrIncomplete) || handler != nil {
			t.Errorf("New(%+v) = %v, %v", h, handler, err)
		}
	}
}
