package serve

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/anvil-dev/anvil/runtime/connect"
	"github.com/anvil-dev/anvil/runtime/fleet"
	"github.com/anvil-dev/anvil/runtime/identity"
	"github.com/anvil-dev/anvil/runtime/vault"
)

// maxScopeScan bounds how many vault records one scope check reads.
const maxScopeScan = 10000

// grantGap is what the stored grants of one OAuth connector lack: the
// scopes its approved operations need that some active connections were
// not granted (an operation approved after the person connected). Calls
// that need them answer auth_required connector/reconnect_required until
// the person connects again.
type grantGap struct {
	Connector string
	// Scopes is what a login asks for now (ConnectAuth's union, or the
	// operator's ANVIL_CONNECT_<C>_SCOPES).
	Scopes []string
	// Connections counts the active connections that lack some of them,
	// and Missing is the union of what they lack, in Scopes' order.
	Connections int
	Missing     []string
	// Accounts names those connections' accounts when the check read
	// only the local person's (auth mode none).
	Accounts []string
}

// scopeCheck is the last grant check, kept while the fleet and the vault
// directory are unchanged (/readyz asks often; a check reads every record).
type scopeCheck struct {
	mu      sync.Mutex
	fleet   *fleet.Fleet
	stamp   string
	gaps    []grantGap
	checked string
}

// grantGaps checks the stored grants of every OAuth connector the gateway
// serves against the scopes its approved operations need. checked says
// whose grants were read: "every person" (the vault directory, up to
// maxScopeScan records), "the local person" (auth mode none with the
// shared store), or "" when none can be read here (no vault, or the shared
// store in branchyard mode, where each call is checked as it comes).
func (g *Gateway) grantGaps() (gaps []grantGap, checked string) {
	f := g.Fleet()
	var oauth []*fleet.Connector
	for _, c := range f.Connectors {
		if connect.KindOf(c.ConnectAuth()) == connect.KindOAuth {
			oauth = append(oauth, c)
		}
	}
	if len(oauth) == 0 {
		return nil, ""
	}
	stamp := ""
	if g.vault != nil && g.records == connect.Records(g.vault) {
		if fi, err := os.Stat(g.vault.Dir()); err == nil {
			stamp = fmt.Sprint(fi.ModTime().UnixNano(), fi.Size())
		}
	}
	c := &g.scopes
	c.mu.Lock()
	defer c.mu.Unlock()
	if stamp != "" && c.fleet == f && c.stamp == stamp {
		return c.gaps, c.checked
	}
	conns, checked := g.storedConnections()
	gaps = make([]grantGap, 0, len(oauth))
	for _, con := range oauth {
		cfg := connect.ConfigFor(con.ID, con.ConnectAuth(), g.cfg.Getenv)
		gap := grantGap{Connector: con.ID, Scopes: cfg.Scopes}
		if !cfg.NoScopeCheck {
			for _, conn := range conns {
				if conn.Connector != con.ID || conn.Kind != vault.KindOAuth || conn.Status != vault.StatusActive {
					continue
				}
				missing := connect.MissingScopes(conn.Scope, cfg.Scopes)
				if len(missing) == 0 {
					continue
				}
				gap.Connections++
				for _, s := range missing {
					if !slices.Contains(gap.Missing, s) {
						gap.Missing = append(gap.Missing, s)
					}
				}
				if g.cfg.Auth.Mode != "branchyard" { // one person's accounts; never name a person's in branchyard mode
					gap.Accounts = append(gap.Accounts, conn.Account)
				}
			}
		}
		// Missing in Scopes' order, whatever order the connections came in.
		slices.SortStableFunc(gap.Missing, func(a, b string) int {
			return slices.Index(cfg.Scopes, a) - slices.Index(cfg.Scopes, b)
		})
		gaps = append(gaps, gap)
	}
	c.fleet, c.stamp, c.gaps, c.checked = f, stamp, gaps, checked
	return gaps, checked
}

// Whose grants grantGaps read.
const (
	checkedAll   = "every person"
	checkedLocal = "the local person"
)

// storedConnections reads the connections a grant check can see.
func (g *Gateway) storedConnections() ([]vault.Connection, string) {
	switch {
	case g.vault != nil && g.records == connect.Records(g.vault):
		all, _, err := g.vault.ListAll(maxScopeScan)
		if err != nil {
			return nil, ""
		}
		return all, checkedAll
	case g.records != nil && g.cfg.Auth.Mode != "branchyard":
		local, err := g.records.List(identity.LocalSub)
		if err != nil {
			return nil, ""
		}
		return local, checkedLocal
	}
	return nil, ""
}

// scopeReport is the startup report's lines about OAuth scopes: what each
// OAuth connector's login asks for, and a warning for each whose stored
// grants lack scopes that approved operations need.
func (g *Gateway) scopeReport() (lines, warnings []string) {
	gaps, checked := g.grantGaps()
	for _, gap := range gaps {
		asks := "no scopes"
		if len(gap.Scopes) > 0 {
			asks = "scopes " + strings.Join(gap.Scopes, " ")
		}
		lines = append(lines, fmt.Sprintf("connector %s: an OAuth login asks for %s", gap.Connector, asks))
		if gap.Connections == 0 {
			continue
		}
		who := fmt.Sprintf("%d stored connection(s)", gap.Connections)
		if len(gap.Accounts) > 0 {
			who += " (account " + strings.Join(gap.Accounts, ", ") + ")"
		}
		warnings = append(warnings, fmt.Sprintf(
			"connector %s: %s lack the scope(s) %s that approved operations need: their calls answer auth_required connector/reconnect_required until the person runs anvil connect again (%s checked)",
			gap.Connector, who, strings.Join(gap.Missing, ", "), checked))
	}
	return lines, warnings
}
