// Package cmdline holds what Anvil's command lines (cmd/anvil, and serve
// mcp in anvil and in every generated gateway's serve.Main) share around
// urfave/cli v2, their one flag parser: the argument order urfave reads
// (Interspersed) and the one exit-error type (Error: how a command fails,
// and what the process prints and exits with).
package cmdline

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// Interspersed exists because v2 stops reading flags at the first
// positional argument, and the contract's command lines put flags after it
// (`anvil serve mcp <workspace> --fleet --http <port>`, `anvil compile
// <spec> --out <dir>`).
//
// Interspersed returns args (args[0] the program name) with the leaf
// command's flags moved in front of its positional arguments, so urfave
// reads every one of them wherever the caller wrote it. The leaf is found by
// walking cmds from args[1]; a command with subcommands is not a leaf, and
// then args are returned as given. A flag the leaf declares with a value
// takes the next argument as its value unless written --flag=value; a
// boolean flag takes none. Everything after "--" stays positional, and so
// does "-" alone; the positional arguments are passed after a "--" of their
// own, so one that starts with "-" is never read as a flag. The order of the
// flags among themselves and of the positional arguments among themselves
// is kept (a repeated flag's last value wins, as in the flag package).
//
// Two cases pass no positional argument at all, since urfave would misread
// it: a value flag that ends the command line without its value (it stays
// last, so the parse fails with "flag needs an argument" instead of taking
// the "--" or a positional argument as its value), and -h or --help (urfave's
// help takes a positional argument for the name of a subcommand to explain).
func Interspersed(cmds []*cli.Command, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	rest := args[1:]
	var leaf *cli.Command
	level := cmds
	for len(rest) > 0 {
		var next *cli.Command
		for _, c := range level {
			if c.HasName(rest[0]) {
				next = c
			}
		}
		if next == nil {
			break
		}
		out = append(out, rest[0])
		rest = rest[1:]
		leaf = next
		if len(next.Subcommands) == 0 {
			break
		}
		level = next.Subcommands
	}
	if leaf == nil || len(leaf.Subcommands) > 0 || leaf.SkipFlagParsing { // such a command reads its own flags
		return args
	}
	takesValue := map[string]bool{}
	for _, f := range leaf.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	var flags, positional []string
	dropPositional := false
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			positional = append(positional, rest[i+1:]...)
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			switch {
			case strings.Contains(name, "="):
			case name == "h" || name == "help":
				dropPositional = true
			case takesValue[name] && i+1 < len(rest):
				flags = append(flags, rest[i+1])
				i++
			case takesValue[name]:
				dropPositional = true
			}
			continue
		}
		positional = append(positional, a)
	}
	out = append(out, flags...)
	if len(positional) > 0 && !dropPositional {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out
}
