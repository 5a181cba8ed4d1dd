package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/anvil-dev/anvil/runtime/discover"
	"github.com/anvil-dev/anvil/runtime/fleet"
)

// toolsCommand is `anvil tools <workspace> [--search text] [--json]`: the
// tools a gateway serving the workspace serves (fleet.Load, the same table
// anvil serve mcp builds), in name order, or ranked for a search with the
// same ranking as anvil_search and GET /tools?search=.
func toolsCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "tools",
		Usage:     "list the tools a gateway serving the workspace serves, or search them",
		ArgsUsage: "<workspace>",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "search", Usage: "rank the tools for this plain-language query (as anvil_search does)"},
			&cli.IntFlag{Name: "limit", Value: discover.DefaultLimit, Usage: fmt.Sprintf("with --search, at most this many tools (1 to %d)", discover.MaxLimit)},
			&cli.StringFlag{Name: "connector", Usage: "only this connector's tools"},
			&cli.BoolFlag{Name: "json", Usage: `print {"tools":[{"name","operation_id","title","summary","effect","confirm_required"}]}, as GET /tools answers`},
		},
		Action: func(c *cli.Context) error { return runTools(e, c) },
	}
}

func runTools(e *env, c *cli.Context) error {
	if c.NArg() != 1 {
		return fail(1, "tools takes one workspace directory (usage: anvil tools <workspace> [--search text] [--json])")
	}
	fl, err := fleet.Load(c.Args().First())
	if err != nil {
		return fail(1, "%v", err)
	}
	conn := c.String("connector")
	if conn != "" && fl.Connector(conn) == nil {
		return fail(1, "no connector %q is served from this workspace", conn)
	}
	ix := fl.SearchIndex()
	var rs []discover.Result
	if c.IsSet("search") {
		limit := c.Int("limit")
		if limit < 1 || limit > discover.MaxLimit {
			return fail(1, "--limit must be from 1 to %d", discover.MaxLimit)
		}
		rs = ix.Search(c.String("search"), discover.Options{Connector: conn, Limit: limit})
	} else {
		entries := ix.Entries()
		for i := range entries {
			if conn == "" || entries[i].Connector == conn {
				rs = append(rs, discover.Result{Entry: &entries[i]})
			}
		}
	}
	if c.Bool("json") {
		b, err := discover.MarshalResponse(rs)
		if err != nil {
			return fail(1, "%v", err)
		}
		fmt.Fprintf(e.stdout, "%s\n", b)
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tOPERATION\tEFFECT\tCONFIRM\tTITLE")
	for _, r := range rs {
		confirm := "-"
		if r.Entry.ConfirmRequired {
			confirm = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Entry.Name, r.Entry.OperationID, r.Entry.Effect, confirm, r.Entry.Title)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rs) == 0 && c.IsSet("search") {
		fmt.Fprintln(e.stderr, "anvil: no served tool matches the search")
	}
	return nil
}
