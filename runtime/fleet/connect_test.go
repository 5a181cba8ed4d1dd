package fleet

import (
	"reflect"
	"testing"

	"github.com/anvil-dev/anvil/runtime/air"
)

// TestConnectAuthAsksForEveryApprovedOperationsScopes: the login of an
// OAuth connector asks for the union of the scopes its served operations
// declare under the auth it connects with (after the service auth's own),
// deduplicated in document order:
// not only the first approved operation's, nor those of operations that
// are not served or connect another way.
func TestConnectAuthAsksForEveryApprovedOperationsScopes(t *testing.T) {
	oauth := func(scheme string, scopes ...string) *air.Auth {
		return &air.Auth{Type: air.AuthOAuth2AuthorizationCode, Scheme: scheme, Scopes: scopes,
			Provider: &air.Provider{AuthorizationEndpoint: "https://login.example/authorize", TokenEndpoint: "https://login.example/token"}}
	}
	op := func(id string, state air.OperationState, a *air.Auth) air.Operation {
		return air.Operation{ID: id, State: state, Auth: a}
	}
	doc := &air.Document{
		Service: air.Service{ID: "music", Auth: *oauth("music_auth", "user.read")},
		Operations: []air.Operation{
			op("music.tracks.list", air.StateApproved, oauth("music_auth", "music.read")),
			op("music.playlists.create", air.StateReviewRequired, oauth("music_auth", "playlists.write")),
			op("music.playlists.list", air.StateApproved, oauth("music_auth", "playlists.read", "music.read")),
			op("music.me.get", air.StateApproved, nil), // the service auth
			op("music.admin.list", air.StateApproved, oauth("admin_auth", "admin")),
			op("music.search", air.StateApproved, &air.Auth{Type: air.AuthNone}),
			op("music.events.receive", air.StateApproved, oauth("music_auth", "events")),
		},
	}
	doc.Operations[6].Archetype = "webhook_receiver" // never served
	c := &Connector{ID: "music", Doc: doc}
	a := c.ConnectAuth()
	if a.Scheme != "music_auth" || !reflect.DeepEqual(a.Scopes, []string{"user.read", "music.read", "playlists.read"}) {
		t.Errorf("ConnectAuth = %s %q", a.Scheme, a.Scopes)
	}
	if got := doc.Operations[0].Auth.Scopes; !reflect.DeepEqual(got, []string{"music.read"}) {
		t.Errorf("the operation's own auth changed: %q", got)
	}

	// Approving playlists.create adds its scope, after those before it.
	doc.Operations[1].State = air.StateApproved
	if a := (&Connector{ID: "music", Doc: doc}).ConnectAuth(); !reflect.DeepEqual(a.Scopes, []string{"user.read", "music.read", "playlists.write", "playlists.read"}) {
		t.Errorf("after approving playlists.create: %q", a.Scopes)
	}
}
