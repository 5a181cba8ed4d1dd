package discovereval

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Layouts of CLI documentation other than a page per command: what each
// says in plain words about one command, and which command that is.

// Layout is how a CLI's documentation is laid out.
type Layout int

const (
	// PagePerCommand: a manual page per command, <cli>-<words>.1.gz,
	// read by ParseManPage (gh, hub, kubectl).
	PagePerCommand Layout = iota
	// SectionedPage: one manual page (ManualSource.File) with a section
	// per command and sub-command, read by ParseSectionedPage (git-hub).
	SectionedPage
	// ClickHelp: the help text of a Python click program, the docstrings
	// of its commands (ManualSource.File), read by ParseClickHelp
	// (gitsome).
	ClickHelp
	// FlagModes: one command whose flags choose what it does, documented
	// by a README turned manual page (ManualSource.File), read by
	// ParseFlagModesPage (gist).
	FlagModes
	// Texinfo: a Texinfo manual (ManualSource.File) that describes commands
	// under index entries, read by ParseTexinfoCommands (Forge).
	Texinfo
)

// Tasks reads the source's documentation from dir and returns its tasks
// with the gold steps of commands (keyed by the full command: "git hub
// issue list"). Every command of the gold must give at least one task and,
// where the layout lists commands, every documented command the gold
// names must be documented: a mismatch is an error, never a silent drop.
func (s ManualSource) Tasks(dir string, commands map[string][][]string) ([]StepTask, error) {
	file := filepath.Join(dir, s.File)
	switch s.Layout {
	case PagePerCommand:
		return ManualTasks(dir, commands)
	case FlagModes:
		p, err := parseFile(file, func(r io.Reader) (FlagModesPage, error) { return ParseFlagModesPage(r, s.Prefix) })
		if err != nil {
			return nil, err
		}
		return flagModeTasks(s.File, s.Prefix, p, commands)
	}
	parse, ok := describers[s.Layout]
	if !ok {
		return nil, fmt.Errorf("%s: unknown layout %d", s.Name, s.Layout)
	}
	descs, err := parseFile(file, parse)
	if err != nil {
		return nil, err
	}
	return describedTasks(s.File, s.Prefix, descs, commands)
}

// describers read the layouts that describe each command once, keyed by
// the command without the source's prefix.
var describers = map[Layout]func(io.Reader) (map[string]string, error){
	SectionedPage: ParseSectionedPage,
	ClickHelp:     ParseClickHelp,
	Texinfo:       ParseTexinfoCommands,
}

// describedTasks gives each gold command one task, its description
// (descs, keyed by the command without prefix, if any); id
// "<command>#name".
func describedTasks(file, prefix string, descs map[string]string, commands map[string][][]string) ([]StepTask, error) {
	var out []StepTask
	for _, c := range sortedKeys(commands) {
		key, ok := c, true
		if prefix != "" {
			key, ok = strings.CutPrefix(c, prefix+" ")
		}
		d, found := descs[key]
		if !ok || !found {
			return nil, fmt.Errorf("%s: no command %q", file, c)
		}
		if d == "" {
			return nil, fmt.Errorf("%s: %q says nothing of its own (an alias): leave it out of the gold", file, c)
		}
		out = append(out, StepTask{ID: c + "#name", Query: d, Steps: commands[c]})
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// ParseSectionedPage reads a manual page that documents every command in
// one COMMANDS section (as rst2man writes git-hub's): a command is a
// ".TP" term whose first word is italic ("\fIlist\fP"), a sub-command is
// one indented under its command, and options (terms starting with "-")
// are not commands. It returns, per command path ("issue list"), the first
// sentence of its description's first paragraph that is the command's own
// words: sentences that only point elsewhere ("Alias for issue show.") or
// stand in parentheses are skipped, so an alias gives "".
func ParseSectionedPage(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	type open struct {
		depth int
		name  string
	}
	var (
		stack []open // the commands enclosing the next term
		depth int
		term  bool     // the next line is a .TP term
		cur   string   // the command whose description is being read
		desc  []string // its first paragraph
	)
	flush := func() {
		if cur != "" {
			out[cur] = ownSentence(unroff(strings.Join(desc, " ")))
		}
		cur, desc = "", nil
	}
	err := walkRoff(r, func(section, line string) error {
		if section != "COMMANDS" {
			return nil
		}
		switch {
		case term:
			term = false
			t := strings.TrimPrefix(line, ".B ")
			name, ok := strings.CutPrefix(t, `\fI`)
			if !ok {
				return nil // an option, or a group of them
			}
			name, _, ok = strings.Cut(name, `\fP`)
			if !ok || strings.HasPrefix(name, `\-`) || name == "" {
				return nil
			}
			for len(stack) > 0 && stack[len(stack)-1].depth >= depth {
				stack = stack[:len(stack)-1]
			}
			stack = append(stack, open{depth, name})
			path := make([]string, len(stack))
			for i, o := range stack {
				path[i] = o.name
			}
			cur = strings.Join(path, " ")
			if _, dup := out[cur]; dup {
				return fmt.Errorf("command %q documented twice", cur)
			}
		case strings.HasPrefix(line, ".INDENT"):
			flush()
			depth++
		case strings.HasPrefix(line, ".UNINDENT"):
			flush()
			depth--
		case strings.HasPrefix(line, ".TP"):
			flush()
			term = true
		case strings.HasPrefix(line, "."):
			flush() // .sp and the like end the first paragraph
		default:
			if cur != "" {
				desc = append(desc, line)
			}
		}
		return nil
	}, flush)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ownSentence returns the first sentence of s that is neither an alias
// note ("Alias for ...") nor a parenthesis, or "".
func ownSentence(s string) string {
	for s != "" {
		var sent string
		if i := strings.Index(s, ". "); i >= 0 {
			sent, s = s[:i+1], strings.TrimSpace(s[i+2:])
		} else {
			sent, s = s, ""
		}
		if strings.HasPrefix(sent, "Alias for ") || strings.HasPrefix(sent, "(") {
			continue
		}
		return sent
	}
	return ""
}

var (
	clickCommand = regexp.MustCompile(`^\s*@cli\.command\((?:'([a-z0-9-]+)')?\)\s*$`)
	pyDef        = regexp.MustCompile(`^\s*def ([A-Za-z_][A-Za-z0-9_]*)\(`)
)

// ParseClickHelp reads the source of a Python click program's commands
// (gitsome's githubcli.py): each "@cli.command()" or
// "@cli.command('name')" function's docstring is the help its --help
// prints, whose first line is the command's summary. The command's name is
// the one given, or the function's with "_" as "-" (click's rule). It
// returns, per command, that first line.
func ParseClickHelp(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	pending, named, doc := false, "", ""
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if m := clickCommand.FindStringSubmatch(line); m != nil {
			pending, named, doc = true, m[1], ""
			continue
		}
		if !pending {
			continue
		}
		if doc == "" {
			if m := pyDef.FindStringSubmatch(line); m != nil {
				doc = named
				if doc == "" {
					doc = strings.ReplaceAll(m[1], "_", "-")
				}
			}
			continue
		}
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		pending = false
		summary, ok := strings.CutPrefix(t, `"""`)
		if !ok || strings.TrimSpace(strings.TrimSuffix(summary, `"""`)) == "" {
			return nil, fmt.Errorf("line %d: command %q: no docstring summary", n, doc)
		}
		if _, dup := out[doc]; dup {
			return nil, fmt.Errorf("line %d: command %q defined twice", n, doc)
		}
		out[doc] = strings.TrimSpace(strings.TrimSuffix(summary, `"""`))
	}
	if pending {
		return nil, fmt.Errorf("command %q: no docstring", named)
	}
	return out, sc.Err()
}

// FlagModesPage is what a one-command page says: its NAME line, and each
// thing the page says the command does, with the command line that does it.
type FlagModesPage struct {
	Summary string
	Uses    []FlagModeUse
}

// FlagModeUse is one plain-language sentence of the page and the example
// command line it introduces.
type FlagModeUse struct {
	Text, Example string
}

// ParseFlagModesPage reads a README turned manual page (ronn, as gist's):
// the NAME line's description, and in the "Command" section each
// paragraph of prose followed by an example paragraph (one starting with
// program): the prose, without the colon that introduces the example, is
// a use of the example's command line. An example line "program ... :
// words" says in words what it does: the words are a use of the command
// line before them. Prose followed by no example is not a use.
func ParseFlagModesPage(r io.Reader, program string) (FlagModesPage, error) {
	var p FlagModesPage
	var paras []string
	var cur []string
	flush := func() {
		if t := unroff(strings.Join(cur, " ")); t != "" {
			paras = append(paras, t)
		}
		cur = cur[:0]
	}
	nofill := false
	err := walkRoff(r, func(section, line string) error {
		switch section {
		case "NAME":
			nameSummary(&p.Summary, line)
		case "Command":
			switch {
			case strings.HasPrefix(line, ".nf"):
				flush()
				nofill = true
			case strings.HasPrefix(line, ".fi"):
				flush()
				nofill = false
			case strings.HasPrefix(line, "."):
				flush()
			default:
				cur = append(cur, line)
				if nofill {
					flush() // each line of an unfilled block stands alone
				}
			}
		}
		return nil
	}, flush)
	if err != nil {
		return p, err
	}
	isExample := func(s string) bool { return s == program || strings.HasPrefix(s, program+" ") }
	for i, para := range paras {
		if isExample(para) {
			if ex, words, ok := strings.Cut(para, " : "); ok {
				p.Uses = append(p.Uses, FlagModeUse{Text: strings.TrimSpace(words), Example: strings.TrimSpace(ex)})
			}
			continue
		}
		if i+1 < len(paras) && isExample(paras[i+1]) {
			ex, _, _ := strings.Cut(paras[i+1], " : ")
			p.Uses = append(p.Uses, FlagModeUse{Text: strings.TrimSuffix(para, ":"), Example: strings.TrimSpace(ex)})
		}
	}
	return p, nil
}

// flagModeTasks gives the NAME line to the bare command and each use to the
// gold mode ("gist-paste -u") whose flag its example line has (the bare
// command when it has none). An example with flags of two modes, or one
// mode of the gold without a task, is an error.
func flagModeTasks(file, program string, p FlagModesPage, commands map[string][][]string) ([]StepTask, error) {
	if _, ok := commands[program]; !ok || p.Summary == "" {
		return nil, fmt.Errorf("%s: want the bare command %q in the gold and a NAME line", file, program)
	}
	out := []StepTask{{ID: program + "#name", Query: p.Summary, Steps: commands[program]}}
	seen := map[string]int{program: 0}
	for _, u := range p.Uses {
		mode := program
		words := strings.Fields(u.Example)
		for _, c := range sortedKeys(commands) {
			flag, ok := strings.CutPrefix(c, program+" ")
			if !ok {
				if c != program {
					return nil, fmt.Errorf("%s: gold command %q is not %s's", file, c, program)
				}
				continue
			}
			for _, w := range words {
				if w == flag {
					if mode != program && mode != c {
						return nil, fmt.Errorf("%s: %q has the flags of two modes", file, u.Example)
					}
					mode = c
				}
			}
		}
		seen[mode]++
		out = append(out, StepTask{ID: fmt.Sprintf("%s#example-%d", mode, seen[mode]), Query: u.Text, Steps: commands[mode]})
	}
	for c := range commands {
		if _, ok := seen[c]; !ok {
			return nil, fmt.Errorf("%s: no use of %q on the page", file, c)
		}
	}
	return out, nil
}

var texinfoLineCommand = regexp.MustCompile(`^@[a-z]+(?:\s|$)`)

var texinfoBrace = regexp.MustCompile(`@(?:code|kbd|key|strong|emph|var|samp|command|file|env|option)\{([^{}]*)\}`)

// ParseTexinfoCommands reads a Texinfo manual that describes commands as
// Emacs manuals do: a command is named by "@deffn Command NAME" or by an
// index entry "@findex NAME" (under a table item), and its description is
// the paragraph that follows the @-lines (other index entries, @itemx).
// It returns, per command, the first sentence of that paragraph, markup
// undone (@code{x} is x, "API@." is "API."). A command described twice
// keeps its first description.
func ParseTexinfoCommands(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	cur := "" // the command whose description comes next
	var desc []string
	flush := func() {
		if cur != "" && len(desc) > 0 {
			if _, dup := out[cur]; !dup {
				out[cur] = ownSentence(untexi(strings.Join(desc, " ")))
			}
			cur = ""
		}
		desc = nil
	}
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		name, isDeffn := strings.CutPrefix(line, "@deffn Command ")
		if !isDeffn {
			name, isDeffn = strings.CutPrefix(line, "@findex ")
		}
		switch {
		case isDeffn:
			flush()
			if f := strings.Fields(name); len(f) > 0 {
				cur = f[0]
			}
		case line == "":
			flush()
		case texinfoLineCommand.MatchString(line):
			// @kindex, @itemx and the like before the paragraph; @end,
			// @item and the like after it end it
			if len(desc) > 0 {
				flush()
			}
		default:
			if cur != "" {
				desc = append(desc, line)
			}
		}
	}
	flush()
	return out, sc.Err()
}

// untexi undoes the Texinfo markup of a description.
func untexi(s string) string {
	for {
		t := texinfoBrace.ReplaceAllString(s, "$1")
		if t == s {
			break
		}
		s = t
	}
	s = strings.NewReplacer("@.", ".", "@:", "", "@@", "@", "@{", "{", "@}", "}", "``", `"`, "''", `"`).Replace(s)
	return strings.Join(strings.Fields(s), " ")
}
