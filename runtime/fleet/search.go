package fleet

import (
	"strings"

	"github.com/anvil-dev/anvil/runtime/discover"
)

// SearchIndex is the fleet's progressive-discovery index over every served
// tool (runtime/discover), built on first use and then shared by every
// search: the fleet is immutable, so one index per fleet is always current
// (a reloaded workspace is a new fleet with its own index).
func (f *Fleet) SearchIndex() *discover.Index {
	f.searchOnce.Do(func() {
		b := discover.NewBuilder()
		for _, c := range f.Connectors {
			if c.Doc != nil {
				b.Schemas(c.ID, c.Doc.Schemas)
			}
		}
		for _, t := range f.Tools {
			// Served names are unique in a fleet (New refuses collisions),
			// so Add cannot fail.
			_ = b.Add(t.Connector.ID, t.Op)
		}
		f.search = b.Build()
	})
	return f.search
}

// MaxSuggestions bounds the tools Suggest names.
const MaxSuggestions = 3

// Suggest names the served tools a caller most likely meant by an unknown
// tool name, best first, at most MaxSuggestions, among the tools visible
// reports true for (nil: all): first every tool served under that name
// without its <connector>__ prefix (or under it with another connector's
// prefix), then the best matches of a search for the words of the name
// after its prefix (the connector's name alone would match every tool).
func (f *Fleet) Suggest(name string, visible func(*Tool) bool) []string {
	ok := func(t *Tool) bool { return t != nil && (visible == nil || visible(t)) }
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] && len(out) < MaxSuggestions {
			seen[n] = true
			out = append(out, n)
		}
	}
	bare := name
	if _, rest, found := strings.Cut(name, "__"); found && rest != "" {
		bare = rest
	}
	for _, t := range f.Tools {
		if ok(t) && strings.EqualFold(t.unprefixed(), bare) {
			add(t.Name)
		}
	}
	for _, r := range f.SearchIndex().Search(strings.ReplaceAll(bare, "__", " "), discover.Options{
		Limit: MaxSuggestions,
		Allow: func(e *discover.Entry) bool { return ok(f.byName[e.Name]) },
	}) {
		add(r.Entry.Name)
	}
	return out
}
