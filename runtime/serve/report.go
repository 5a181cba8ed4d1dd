package serve

import (
	"fmt"
	"sort"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/connect"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/upstream"
)

// StartupReport is what the gateway tells its operator before it serves,
// one line each: inbound auth, every connector with its tool count and
// bundleHash, the vault, the egress allowlist, and a warning for each
// served upstream host the allowlist blocks and each OAuth connector whose
// client is not configured (ANVIL_CONNECT_<C>_*). None of these stops the
// gateway; each would otherwise surface only when a call fails.
func (g *Gateway) StartupReport() []string {
	f := g.Fleet()
	var out, warn []string
	mode := g.cfg.Auth.Mode
	switch mode {
	case "branchyard":
		out = append(out, fmt.Sprintf("inbound auth: branchyard (issuer %s, audience %s)", g.cfg.Auth.Issuer, g.cfg.Auth.Audience))
	case "oidc":
		out = append(out, g.oidc.report(g.cfg.Auth.Audience)...)
	default:
		out = append(out, "inbound auth: none (loopback callers only, every tool unrestricted)")
	}
	for _, c := range f.Connectors {
		hash := c.BundleHash
		if hash == "" {
			hash = "none (no generation.json)"
		}
		out = append(out, fmt.Sprintf("connector %s: %d tool(s), bundleHash %s", c.ID, c.ToolCount(), hash))
	}
	switch {
	case g.vault != nil && g.cfg.DevVaultKey:
		made := "found"
		if g.cfg.DevVaultKeyCreated {
			made = "created now"
		}
		out = append(out, fmt.Sprintf("vault: development key %s (%s, mode 0600; auth mode none only: set ANVIL_VAULT_KEY_FILE to use a key of your own), records in %s",
			g.cfg.VaultKeyFile, made, g.vault.Dir()))
	case g.vault != nil:
		out = append(out, fmt.Sprintf("vault: key file %s found, records in %s", g.cfg.VaultKeyFile, g.vault.Dir()))
	default:
		out = append(out, "vault: no key file (ANVIL_VAULT_KEY_FILE unset): connections cannot be stored")
		if needsCredential(f.Connectors) {
			warn = append(warn, "no vault: calls to connectors that need a credential will answer auth_required")
		}
	}
	allow := upstream.ParseAllowlist(g.cfg.AllowedHosts, g.cfg.Env)
	switch {
	case allow.AllowsAny():
		out = append(out, "egress allowlist: empty, every upstream host allowed (ANVIL_ENV=dev)")
	case len(allow.Hosts()) == 0:
		out = append(out, "egress allowlist: empty, every upstream host is blocked (set ANVIL_ALLOWED_HOSTS, or ANVIL_ENV=dev for development)")
	default:
		out = append(out, "egress allowlist: "+strings.Join(allow.Hosts(), ", "))
	}
	blocked := map[string][]string{}
	for _, c := range f.Connectors {
		if _, host, err := c.UpstreamBase(); err == nil && host != "" && !allow.Allows(host) {
			blocked[host] = append(blocked[host], c.ID)
		}
	}
	hosts := make([]string, 0, len(blocked))
	for h := range blocked {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		warn = append(warn, fmt.Sprintf("upstream host %s (connector %s) is not in ANVIL_ALLOWED_HOSTS: its calls will be refused", h, strings.Join(blocked[h], ", ")))
	}
	scopeLines, scopeWarnings := g.scopeReport()
	out = append(out, scopeLines...)
	warn = append(warn, scopeWarnings...)
	for _, c := range f.Connectors {
		a := c.ConnectAuth()
		if !isOAuth(a.Type) {
			continue
		}
		if err := connect.ConfigFor(c.ID, a, g.cfg.Getenv).Validate(); err != nil {
			warn = append(warn, fmt.Sprintf("connector %s uses OAuth but cannot connect: %v (set %sCLIENT_ID, %sCLIENT_SECRET, …)",
				c.ID, err, connect.EnvPrefix(c.ID), connect.EnvPrefix(c.ID)))
		}
	}
	for _, w := range warn {
		out = append(out, "warning: "+w)
	}
	return out
}

func isOAuth(t air.AuthType) bool {
	return t == air.AuthOAuth2AuthorizationCode || t == air.AuthOAuth2ClientCredentials || t == air.AuthOAuth2OnBehalfOf
}

// needsCredential reports whether any connector is connected with a
// credential (its service or an approved operation declares auth).
func needsCredential(cs []*fleet.Connector) bool {
	for _, c := range cs {
		if connect.KindOf(c.ConnectAuth()) != connect.KindNone {
			return true
		}
	}
	return false
}
