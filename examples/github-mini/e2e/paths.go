package e2e

import "path/filepath"

// paths are the files and directories of one run, all under the work
// directory, named as the seed names them ($WORK/...).
type paths struct {
	bin          string // built binaries
	src          string // the rewritten spec's directory
	spec         string // $WORK/src/openapi.yaml
	workspace    string // $WORK/workspace
	bundle       string // $WORK/workspace/github
	connectors   string // $WORK/home/connectors
	pkg          string // $WORK/home/connectors/github
	compose      string // $WORK/home/connectors/_compose
	grants       string // $WORK/grants.json
	index        string // $WORK/home/connectors/INDEX.md
	yard         string // $WORK/yard
	jwks         string // $WORK/yard/jwks.json
	vaultKey     string // $WORK/vault.key
	vault        string // $WORK/vault
	audit        string // $WORK/audit.jsonl
	turnToken    string // $WORK/turn.token
	connectToken string // $WORK/connect.token
	writeToken   string // $WORK/write.token
	scripts      string // $WORK/scripts: the Python scripts the harness steps run
	logs         string // $WORK/logs: long-running processes' output
}

func newPaths(work string) paths {
	j := func(p ...string) string { return filepath.Join(append([]string{work}, p...)...) }
	return paths{
		bin:          j("bin"),
		src:          j("src"),
		spec:         j("src", "openapi.yaml"),
		workspace:    j("workspace"),
		bundle:       j("workspace", "github"),
		connectors:   j("home", "connectors"),
		pkg:          j("home", "connectors", "github"),
		compose:      j("home", "connectors", "_compose"),
		grants:       j("grants.json"),
		index:        j("home", "connectors", "INDEX.md"),
		yard:         j("yard"),
		jwks:         j("yard", "jwks.json"),
		vaultKey:     j("vault.key"),
		vault:        j("vault"),
		audit:        j("audit.jsonl"),
		turnToken:    j("turn.token"),
		connectToken: j("connect.token"),
		writeToken:   j("write.token"),
		scripts:      j("scripts"),
		logs:         j("logs"),
	}
}
