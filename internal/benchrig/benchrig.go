// Package benchrig writes what Anvil's measuring tools (internal/loadgen,
// internal/soak) serve: a workspace holding the committed github-mini
// bundle pointed at an upstream, a turn-token signing key with its JWKS
// file, and a fresh vault key file. It is development infrastructure:
// internal/archtest keeps it out of shipped code.
package benchrig

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/auth/authtest"
)

// Rig is what Write made, every path inside its directory.
type Rig struct {
	Workspace    string       // the workspace directory; the bundle is its github/
	Key          authtest.Key // signs turn tokens
	JWKS         string       // the JWKS file holding Key's public half
	VaultKey     []byte       // 32 random bytes
	VaultKeyFile string       // VaultKey as hex, owner-only
}

// Write loads bundle (relative to the repository root, where the tools
// run), points its server at upstreamURL, and writes the workspace, a key
// named keyID with its JWKS and a vault key under dir.
func Write(dir, bundle, upstreamURL, keyID string) (*Rig, error) {
	doc, err := air.Load(bundle)
	if err != nil {
		return nil, fmt.Errorf("loading %s (run from the repository root): %w", bundle, err)
	}
	doc.Service.Servers = []air.Server{{URL: upstreamURL}}
	r := &Rig{Workspace: filepath.Join(dir, "workspace"), Key: authtest.NewKey(keyID),
		JWKS: filepath.Join(dir, "jwks.json"), VaultKeyFile: filepath.Join(dir, "vault.key")}
	if err := air.WriteBundle(filepath.Join(r.Workspace, "github"), doc); err != nil {
		return nil, err
	}
	if err := authtest.WriteJWKS(r.JWKS, r.Key); err != nil {
		return nil, err
	}
	r.VaultKey = make([]byte, 32)
	if _, err := rand.Read(r.VaultKey); err != nil {
		return nil, err
	}
	if err := os.WriteFile(r.VaultKeyFile, []byte(hex.EncodeToString(r.VaultKey)), 0o600); err != nil {
		return nil, err
	}
	return r, nil
}
