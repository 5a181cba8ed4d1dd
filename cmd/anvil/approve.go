package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/compiler/emit/files"
	"github.com/anvil-dev/anvil/compiler/lock"
	"github.com/anvil-dev/anvil/runtime/air"
)

func approveCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "approve",
		Usage:     "approve operations of a compiled bundle and regenerate it atomically",
		ArgsUsage: "<bundle dir | air.json> <operation-id...>",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "manifest", Usage: "record the approvals in the anvil.lock beside this manifest (default: the manifest the bundle was compiled from)"},
		},
		Action: func(c *cli.Context) error { return runApprove(e, c) },
	}
}

func runApprove(e *env, c *cli.Context) error {
	if c.NArg() < 2 {
		return fail(1, "approve takes a bundle and at least one operation id (usage: anvil approve <bundle> <operation-id...>)")
	}
	dir := c.Args().First()
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		dir = filepath.Dir(dir)
	}
	doc, err := loadCompleteBundle(dir)
	if err != nil {
		return fail(1, "%v", err)
	}
	ids := c.Args().Slice()[1:]
	var unknown, blocked []string
	for _, id := range ids {
		op := doc.Operation(id)
		switch {
		case op == nil:
			unknown = append(unknown, id)
		case op.State == air.StateBlocked:
			blocked = append(blocked, id)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fail(1, "Approval refused: no operation %q in %s (operation ids are AIR ids such as %s)", unknown[0], dir, exampleID(doc))
	}
	if len(blocked) > 0 {
		sort.Strings(blocked)
		return fail(1, "Approval refused: %v remain blocked; change their state in the manifest and compile again", blocked)
	}
	newly := 0
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		op := doc.Operation(id)
		if op.State != air.StateApproved {
			op.State = air.StateApproved
			newly++
		}
	}
	lockPath, err := recordApprovals(doc, dir, c.String("manifest"), ids)
	if err != nil {
		return fail(1, "recording the approvals: %v", err)
	}
	rendered, err := air.Files(doc)
	if err != nil {
		return fail(1, "rendering the bundle: %v", err)
	}
	if err := keepOrigin(files.FromBytes(rendered), dir).WriteTo(dir); err != nil {
		return fail(1, "writing %s: %v", dir, err)
	}
	fmt.Fprintf(e.stdout, "Approved %d new operation(s) (%d requested) and atomically regenerated %d bundle files in %s.\n", newly, len(ids), len(rendered), dir)
	if lockPath != "" {
		fmt.Fprintf(e.stdout, "Recorded the approvals in %s; anvil compile keeps them while the contracts match.\n", lockPath)
	} else {
		fmt.Fprintf(e.stdout, "The bundle records no manifest, so the approvals live in the bundle only (give --manifest to keep them in %s).\n", lock.FileName)
	}
	return nil
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

func exampleID(doc *air.Document) string {
	if len(doc.Operations) > 0 {
		return doc.Operations[0].ID
	}
	return doc.Service.ID + ".resource.action"
}
