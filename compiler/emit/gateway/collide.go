package gateway

import (
	"fmt"
	"slices"
)

// CodeConnectorCollision is the error of two connector ids the generated
// tree would name alike, or of one that takes a name the tree reserves.
const CodeConnectorCollision = "gateway/connector_id_collision"

// reservedStems are file stems the generated tree, or the go tool, gives a
// meaning of its own: workspace/workspace_gen.go is the workspace table,
// and the go tool treats a vendor directory as vendored code and leaves a
// testdata directory out of builds.
var reservedStems = map[string]string{
	pkgName:    "the generated workspace package's own file (" + pkgName + "/" + pkgName + "_gen.go)",
	"vendor":   "a directory the go tool reads as vendored code",
	"testdata": "a directory the go tool leaves out of builds",
}

// Collision is a connector id the generated tree cannot hold beside
// another (With) or at all (With empty, Reason set).
type Collision struct {
	ID, With string
	Stem     string // the file and package directory name both map to
	Reason   string
}

func (c Collision) Error() string {
	if c.With != "" {
		return fmt.Sprintf("%s: connectors %q and %q both become the Go file and package directory %q of the generated gateway (ids differing only in case, or in - and _, name one Go package); rename one of the bundle directories", CodeConnectorCollision, c.ID, c.With, c.Stem)
	}
	return fmt.Sprintf("%s: connector %q becomes %q, %s; rename its bundle directory", CodeConnectorCollision, c.ID, c.Stem, c.Reason)
}

// Collisions returns every connector id of ids that the generated tree
// would name like an earlier one, or that takes a reserved name, in the
// order of ids. Generate refuses a workspace that has any; `anvil compile
// --workspace` reports them all first.
func Collisions(ids []string) []Collision {
	var out []Collision
	byStem := map[string]string{}
	for _, id := range ids {
		stem := fileStem(id)
		if why, ok := reservedStems[stem]; ok {
			out = append(out, Collision{ID: id, Stem: stem, Reason: why})
			continue
		}
		if other, dup := byStem[stem]; dup && other != id {
			out = append(out, Collision{ID: id, With: other, Stem: stem})
			continue
		}
		byStem[stem] = id
	}
	return out
}

// connectorIDs lists the workspace's connector ids in order.
func connectorIDs(ws *Workspace) []string {
	ids := make([]string, len(ws.Connectors))
	for i, c := range ws.Connectors {
		ids[i] = c.ID
	}
	return slices.Clip(ids)
}
