package templates

import "embed"

// Compose holds the composite's template tree (compose/): SKILL.md, the
// anvil_compose Python package and the TypeScript sources. Files ending in
// ".tmpl" are templates; every other file is copied as it is.
//
//go:embed all:compose
var Compose embed.FS
