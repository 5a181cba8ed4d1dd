package lower

import (
	"sort"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/canon"
)

// sensitiveInputs is air.Input.Sensitive for a tool input schema's
// properties: the keys whose values the audit hash redacts
// (canon.SensitiveKey), sorted; nil when there are none. Lowering decides
// it here, once per operation, so that generated gateways write the
// redaction as code and test no names when they start.
func sensitiveInputs(props map[string]*air.Schema) []string {
	var out []string
	for k := range props {
		if canon.SensitiveKey(k) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
