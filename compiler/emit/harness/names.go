package harness

import "strings"

// tsReserved are names a TypeScript class member must not take.
var tsReserved = map[string]bool{"constructor": true, "lastEffect": true, "connector": true}

// skillName is the SKILL.md name: the connector lower-cased, in [a-z0-9-].
func skillName(connector string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(connector) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if s == "" {
		return "connector"
	}
	return s
}
