package cmdline

import (
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestInterspersed(t *testing.T) {
	cmds := []*cli.Command{
		{Name: "serve", Subcommands: []*cli.Command{{Name: "mcp", Flags: []cli.Flag{
			&cli.BoolFlag{Name: "fleet"},
			&cli.StringFlag{Name: "http", Aliases: []string{"p"}},
			&cli.StringFlag{Name: "host"},
		}}}},
		{Name: "raw", SkipFlagParsing: true, Flags: []cli.Flag{&cli.BoolFlag{Name: "x"}}},
	}
	for _, c := range []struct{ in, want string }{
		// Flags move in front of the positional arguments, which follow a "--".
		{"a serve mcp ws --fleet --http 1", "a serve mcp --fleet --http 1 -- ws"},
		{"a serve mcp --fleet ws --host h --http=2", "a serve mcp --fleet --host h --http=2 -- ws"},
		{"a serve mcp ws -p 1", "a serve mcp -p 1 -- ws"},
		// A boolean flag takes no value: the next argument is positional.
		{"a serve mcp --fleet ws", "a serve mcp --fleet -- ws"},
		// Everything after "--" stays positional, and so does "-".
		{"a serve mcp ws -- --fleet", "a serve mcp -- ws --fleet"},
		{"a serve mcp - --fleet", "a serve mcp --fleet -- -"},
		// A value flag takes the next argument whatever it looks like.
		{"a serve mcp ws --http --fleet", "a serve mcp --http --fleet -- ws"},
		// Order among flags and among positional arguments is kept.
		{"a serve mcp x --http 1 y --http 2", "a serve mcp --http 1 --http 2 -- x y"},
		// A value flag without its value stays last, with no positional
		// argument it could take for a value.
		{"a serve mcp ws --fleet --http", "a serve mcp --fleet --http"},
		// Help takes no positional argument (urfave would read it as a
		// subcommand to explain).
		{"a serve mcp ws --help", "a serve mcp --help"},
		{"a serve mcp ws -h --fleet", "a serve mcp -h --fleet"},
		// An unknown flag moves like a boolean one; the parse refuses it.
		{"a serve mcp ws --bogus", "a serve mcp --bogus -- ws"},
		{"a serve mcp", "a serve mcp"},
		// Not a leaf, no command, or one that reads its own flags: as given.
		{"a serve ws --fleet", "a serve ws --fleet"},
		{"a bogus ws --fleet", "a bogus ws --fleet"},
		{"a raw ws --x", "a raw ws --x"},
		{"a", "a"},
	} {
		if got := strings.Join(Interspersed(cmds, strings.Fields(c.in)), " "); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

// TestInterspersedParses runs urfave on the reordered arguments: every flag
// is read wherever it was written, and the positional arguments arrive
// whole, a "-"-led one after "--" included.
func TestInterspersedParses(t *testing.T) {
	var fleet bool
	var http string
	var positional []string
	cmd := &cli.Command{Name: "mcp", Flags: []cli.Flag{&cli.BoolFlag{Name: "fleet"}, &cli.StringFlag{Name: "http"}},
		Action: func(c *cli.Context) error {
			fleet, http, positional = c.Bool("fleet"), c.String("http"), c.Args().Slice()
			return nil
		}}
	app := &cli.App{Commands: []*cli.Command{cmd}, ExitErrHandler: func(*cli.Context, error) {}}
	args := []string{"a", "mcp", "ws", "--http=8080", "--fleet", "--", "-x"}
	if err := app.Run(Interspersed(app.Commands, args)); err != nil {
		t.Fatal(err)
	}
	if !fleet || http != "8080" || !slices.Equal(positional, []string{"ws", "-x"}) {
		t.Errorf("fleet %v, http %q, positional %q", fleet, http, positional)
	}
}
