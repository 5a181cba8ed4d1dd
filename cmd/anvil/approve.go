package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/compiler"
	"github.com/anvil-dev/anvil/compiler/lock"
	"github.com/anvil-dev/anvil/compiler/manifest"
	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/grant"
)

func approveCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "approve",
		Usage: "approve operations of a compiled bundle and regenerate it atomically",
		ArgsUsage: "<bundle dir | air.json> [name...]\n\n" +
			"A name is an AIR id (github.issues.list), an operationId (listIssues), a canonical name\n" +
			"(list_issue), a tool name (github_list_issue), or a glob over AIR ids with or without the\n" +
			"service prefix ('issues.*' and 'github.issues.*' mean the same; * matches dots too).",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all-reads", Usage: "approve every read"},
			&cli.BoolFlag{Name: "all", Usage: "approve every operation"},
			&cli.BoolFlag{Name: "reads-only", Usage: "approve only the reads among what the names select (with --all: every read)"},
			&cli.StringFlag{Name: "reviewed-by", Usage: "who reviewed the operations (required for operations that act as a person: oauth2_authorization_code)"},
			&cli.StringFlag{Name: "review-reason", Usage: "why they may be served (required with --reviewed-by's operations)"},
			&cli.StringFlag{Name: "manifest", Usage: "record the approvals in the anvil.lock beside this manifest (default: the manifest the bundle was compiled from)"},
		},
		Action: func(c *cli.Context) error { return runApprove(e, c) },
	}
}

func runApprove(e *env, c *cli.Context) error {
	if c.NArg() < 1 || (c.NArg() < 2 && !c.Bool("all") && !c.Bool("all-reads")) {
		return fail(1, "approve takes a bundle and at least one operation name, --all-reads or --all (usage: anvil approve <bundle> <name...>)")
	}
	ctx := c.Context
	dir := c.Args().First()
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		dir = filepath.Dir(dir)
	}
	doc, err := loadCompleteBundle(dir)
	if err != nil {
		return fail(1, "%v", err)
	}
	if err := ctx.Err(); err != nil {
		return interrupted(dir)
	}
	names := c.Args().Slice()[1:]
	sel := resolveApproval(doc, names, c.Bool("all-reads"), c.Bool("all"))
	if c.Bool("reads-only") {
		sel.keepReads(doc)
	}
	if n := len(sel.Unknown); n > 0 {
		shown := sel.Unknown
		if n > maxReported {
			shown = append(shown[:maxReported:maxReported], fmt.Sprintf("and %d more", n-maxReported))
		}
		return fail(1, "Approval refused: %s; nothing was changed", strings.Join(shown, "; "))
	}
	if len(sel.Blocked) > 0 {
		return fail(1, "Approval refused: %v remain blocked; change their state in the manifest and compile again", sel.Blocked)
	}
	who, why := strings.TrimSpace(c.String("reviewed-by")), strings.TrimSpace(c.String("review-reason"))
	if need := needReview(doc, sel); len(need) > 0 && (who == "" || why == "") {
		return fail(1, "Approval refused: %s act as a person (auth oauth2_authorization_code), so approving them needs --reviewed-by <who> and --review-reason <why> (the manifest's reviewed_by and review_reason)", strings.Join(need, ", "))
	}
	var newly []int // positions of the operations this run approves
	for _, i := range sel.index {
		op := &doc.Operations[i]
		if op.State != air.StateApproved {
			op.State = air.StateApproved
			newly = append(newly, i)
			if who != "" {
				op.ReviewNotes = append(op.ReviewNotes, reviewNote(who, why))
			}
		}
	}
	// An interrupt stops the work up to the lock's rename (the lock and
	// the bundle are each written atomically, the lock first); once the
	// lock holds the approvals, the bundle is rendered and written too, so
	// the two agree. The bundle is rendered after the lock is written, not
	// held through it: on the largest APIs each is hundreds of megabytes.
	lockPath, err := recordApprovals(ctx, doc, dir, c.String("manifest"), sel.IDs)
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return interrupted(dir)
	}
	if err != nil {
		return fail(1, "recording the approvals: %v", err)
	}
	written, err := compiler.Rebundle(doc, dir)
	if err != nil {
		return fail(1, "%v", err)
	}
	fmt.Fprintf(e.stdout, "Approved %d new operation(s) (%d requested) and atomically regenerated %d bundle files in %s.\n", len(newly), len(sel.IDs), written, dir)
	writeApproved(e, doc, newly)
	for _, g := range sel.Globs {
		if g.Writes > 0 {
			fmt.Fprintf(e.stdout, "  %s matched %d write(s) among %d operation(s); --reads-only approves only the reads\n", g.Glob, g.Writes, g.Matched)
		}
	}
	if len(sel.Writes) > 0 {
		fmt.Fprintf(e.stdout, "  left out by --reads-only: %d write(s): %s\n", len(sel.Writes), strings.Join(sel.Writes, ", "))
	}
	if len(sel.Skipped) > 0 {
		fmt.Fprintf(e.stdout, "  left blocked: %s\n", strings.Join(sel.Skipped, ", "))
	}
	if lockPath != "" {
		fmt.Fprintf(e.stdout, "Recorded the approvals in %s; anvil compile keeps them while the contracts match.\n", lockPath)
	} else {
		fmt.Fprintf(e.stdout, "The bundle records no manifest, so the approvals live in the bundle only (give --manifest to keep them in %s).\n", lock.FileName)
	}
	return nil
}

// interrupted is approve's answer to SIGINT or SIGTERM before anything
// was written.
func interrupted(dir string) error {
	return fail(1, "Approval interrupted: nothing was changed in %s or its %s", dir, lock.FileName)
}

// maxReported bounds how many unknown names one refusal lists.
const maxReported = 20

// approval is what approve's names select.
type approval struct {
	IDs     []string // AIR ids to approve, in document order, each once
	index   []int    // IDs' positions in doc.Operations
	Unknown []string // one message per name that selects nothing, with suggestions
	Blocked []string // blocked operations named exactly: refused
	Skipped []string // blocked operations a glob or --all selected: left as they are
	Globs   []globMatch
	Writes  []string // writes --reads-only left out (keepReads)
}

// globMatch is what one glob selected: how many operations, how many of
// them writes.
type globMatch struct {
	Glob            string
	Matched, Writes int
}

// keepReads narrows the selection to reads (--reads-only), recording the
// writes it leaves out.
func (sel *approval) keepReads(doc *air.Document) {
	ids, index := sel.IDs[:0], sel.index[:0]
	for k, i := range sel.index {
		if doc.Operations[i].Effect.Kind == air.KindRead {
			ids, index = append(ids, sel.IDs[k]), append(index, i)
		} else {
			sel.Writes = append(sel.Writes, sel.IDs[k])
		}
	}
	sel.IDs, sel.index = ids, index
}

// writeApproved lists every operation approve approved, one per line with
// its kind (read or write), operationId, method and path, and whether it
// needs confirmation: a glob's reach is then visible, writes included.
func writeApproved(e *env, doc *air.Document, newly []int) {
	for _, i := range newly {
		op := &doc.Operations[i]
		kind := "read "
		if op.Effect.Kind != air.KindRead {
			kind = "write"
		}
		var notes []string
		if id := op.SourceRef.OperationID; id != "" {
			notes = append(notes, id)
		}
		if op.SourceRef.Method != "" {
			notes = append(notes, op.SourceRef.Method+" "+op.SourceRef.Path)
		}
		if op.Confirmation.Required {
			notes = append(notes, "needs confirmation")
		}
		line := "  " + kind + "  " + op.ID
		if len(notes) > 0 {
			line += " (" + strings.Join(notes, "; ") + ")"
		}
		fmt.Fprintln(e.stdout, line)
	}
}

// resolveApproval resolves approve's names against doc. A name is an AIR
// id, an operationId, a canonical name or a tool name, or, when it holds *
// or ?, a glob matched as grants match (grant.MatchGlob) against each AIR
// id and the id without its service prefix. allReads selects every read and
// all every operation. Every name that selects nothing is reported, with
// the nearest names as suggestions; a name that several operations answer
// to selects them all. Blocked operations are refused when named exactly
// and skipped when a glob or flag selects them.
func resolveApproval(doc *air.Document, names []string, allReads, all bool) approval {
	var sel approval
	chosen := make([]bool, len(doc.Operations))
	exact := make([]bool, len(doc.Operations))
	index := map[string][]int{}
	var vocabulary []string
	for i := range doc.Operations {
		op := &doc.Operations[i]
		for _, n := range []string{op.ID, grant.ShortID(op.ID, doc.Service.ID), op.SourceRef.OperationID, op.CanonicalName, op.MCP.ToolName} {
			if n == "" {
				continue
			}
			if len(index[n]) == 0 || index[n][len(index[n])-1] != i {
				if len(index[n]) == 0 {
					vocabulary = append(vocabulary, n)
				}
				index[n] = append(index[n], i)
			}
		}
		if all || (allReads && op.Effect.Kind == air.KindRead) {
			chosen[i] = true
		}
	}
	sort.Strings(vocabulary)
	for _, name := range names {
		if strings.ContainsAny(name, "*?") {
			n, writes := 0, 0
			for i := range doc.Operations {
				id := doc.Operations[i].ID
				if grant.MatchGlob(name, id) || grant.MatchGlob(name, grant.ShortID(id, doc.Service.ID)) {
					chosen[i] = true
					n++
					if doc.Operations[i].Effect.Kind != air.KindRead && doc.Operations[i].State != air.StateBlocked {
						writes++
					}
				}
			}
			if n > 0 {
				sel.Globs = append(sel.Globs, globMatch{Glob: "'" + name + "'", Matched: n, Writes: writes})
			}
			if n == 0 {
				sel.Unknown = append(sel.Unknown, fmt.Sprintf("%q matches no operation id%s", name, examples(doc)))
			}
			continue
		}
		hits := index[name]
		if len(hits) == 0 {
			msg := fmt.Sprintf("no operation %q in %s", name, doc.Service.ID)
			// Past what the refusal shows, a name is counted, not matched
			// against every name of the API.
			if len(sel.Unknown) < maxReported {
				if s, ok := manifest.Suggest(name, vocabulary); ok {
					msg += fmt.Sprintf(" (did you mean %q?)", s)
				} else {
					msg += examples(doc)
				}
			}
			sel.Unknown = append(sel.Unknown, msg)
			continue
		}
		for _, i := range hits {
			chosen[i], exact[i] = true, true
		}
	}
	for i := range doc.Operations {
		if !chosen[i] {
			continue
		}
		op := &doc.Operations[i]
		switch {
		case op.State == air.StateBlocked && exact[i]:
			sel.Blocked = append(sel.Blocked, op.ID)
		case op.State == air.StateBlocked:
			sel.Skipped = append(sel.Skipped, op.ID)
		default:
			sel.IDs = append(sel.IDs, op.ID)
			sel.index = append(sel.index, i)
		}
	}
	return sel
}

// examples names the accepted forms with this bundle's first operation.
func examples(doc *air.Document) string {
	if len(doc.Operations) == 0 {
		return ""
	}
	op := &doc.Operations[0]
	return fmt.Sprintf(" (names are AIR ids such as %s, operationIds such as %s, canonical names, tool names, or globs such as '%s.*')",
		op.ID, firstOf(op.SourceRef.OperationID, op.CanonicalName), strings.SplitN(grant.ShortID(op.ID, doc.Service.ID), ".", 2)[0])
}

func firstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// needReview lists the selected operations not yet approved whose
// effective auth acts as a person (oauth2_authorization_code): the
// contract requires a reviewer and a reason to approve them.
func needReview(doc *air.Document, sel approval) []string {
	var out []string
	for _, i := range sel.index {
		op := &doc.Operations[i]
		id := op.ID
		a := doc.Service.Auth
		if op.Auth != nil {
			a = *op.Auth
		}
		if op.State != air.StateApproved && (a.Type == air.AuthOAuth2AuthorizationCode || a.Type == air.AuthOAuth2) {
			out = append(out, id)
		}
	}
	return out
}

// reviewNote records an approval's reviewer and reason in the operation's
// review notes (AIR has no other place for them).
func reviewNote(who, why string) string {
	return "Approved by " + who + ": " + why
}

// loadCompleteBundle loads a bundle's AIR and checks that every file its
// generation manifest lists is present.
func loadCompleteBundle(dir string) (*air.Document, error) {
	doc, err := air.Load(dir)
	if err != nil {
		return nil, err
	}
	gen, err := air.LoadGeneration(dir)
	if err != nil {
		return nil, fmt.Errorf("%s is an incomplete bundle (no readable %s): compile it again", dir, air.GenerationFile)
	}
	for _, f := range gen.Files {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
			return nil, fmt.Errorf("%s is an incomplete bundle (%s is missing): compile it again", dir, f)
		}
	}
	return doc, nil
}
