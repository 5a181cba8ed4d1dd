package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersed moves a leaf command's flags in front of its positional
// arguments, so "anvil compile spec.yaml --out dir" works: urfave/cli v2 stops
// reading flags at the first positional argument. Everything after "--" is
// left positional.
func interspersed(cmds []*cli.Command, args []string) []string {
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
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			positional = append(positional, rest[i+1:]...)
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if strings.Contains(name, "=") {
				continue
			}
			if takesValue[name] && i+1 < len(rest) {
				flags = append(flags, rest[i+1])
				i++
			}
			continue
		}
		positional = append(positional, a)
	}
	out = append(out, flags...)
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out
}
