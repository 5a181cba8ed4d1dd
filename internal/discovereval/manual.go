package discovereval

import (
	"bufio"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"path/filepath"
	"sort"
	"strings"
)

// Tasks from text the team did not write: the manual pages of command-line
// clients of the APIs we compile (GitHub's gh and hub, Kubernetes' kubectl;
// Debian packages, fetched by scripts/fetch-specs.sh). The vendor wrote
// each page for its CLI; its NAME line ("gh-issue-list - List issues in a
// repository") and the comment of each example ("# download all assets
// from a specific release") say in plain words what a command does. The
// command's API operations (testdata/<cli>_commands.txt) are the gold.

// ManualSource is one CLI's manual pages over one API description.
type ManualSource struct {
	Name      string // "gh manual"
	Spec      string // the API description under the specs directory
	Connector string
	Dir       string // the pages' directory under the specs directory
	Commands  string // the gold, under testdata/
	Layout    Layout // how the documentation is laid out
	File      string // the one file of a layout other than PagePerCommand, in Dir
	Prefix    string // what the gold's commands start with, when File documents them all ("git hub")
}

// ManualSources are the manual page task sets, in the order they are
// reported (docs/discovery.md, "Evaluation").
var ManualSources = []ManualSource{
	{Name: "gh manual", Spec: "github.json", Connector: "github", Dir: "gh-man", Commands: "gh_commands.txt"},
	{Name: "hub manual", Spec: "github.json", Connector: "github", Dir: "hub-man", Commands: "hub_commands.txt"},
	{Name: "kubectl manual", Spec: "kubernetes.json", Connector: "kubernetes", Dir: "kubectl-man", Commands: "kubectl_commands.txt"},
	{Name: "git-hub manual", Spec: "github.json", Connector: "github", Dir: "git-hub-man", Commands: "git-hub_commands.txt",
		Layout: SectionedPage, File: "git-hub.1.gz", Prefix: "git hub"},
	{Name: "gitsome help", Spec: "github.json", Connector: "github", Dir: "gitsome-man", Commands: "gitsome_commands.txt",
		Layout: ClickHelp, File: "githubcli.py", Prefix: "gh-gitsome"},
	{Name: "gist manual", Spec: "github.json", Connector: "github", Dir: "gist-man", Commands: "gist_commands.txt",
		Layout: FlagModes, File: "gist-paste.1.gz", Prefix: "gist-paste"},
	{Name: "git-extras manual", Spec: "github.json", Connector: "github", Dir: "git-extras-man", Commands: "git-extras_commands.txt"},
	{Name: "forge manual", Spec: "github.json", Connector: "github", Dir: "forge-man", Commands: "forge_commands.txt",
		Layout: Texinfo, File: "forge.texi.gz"},
}

// ManualPool scores small manual sets over one API together, as one set:
// each alone has too few tasks per half for its figures to mean much. A
// task keeps its half (its id names its CLI).
type ManualPool struct {
	Name, Spec, Connector string
	Sets                  []string // ManualSources' names
}

// ManualPools are the pooled manual sets (docs/discovery.md, "other
// GitHub CLIs").
var ManualPools = []ManualPool{
	{Name: "other GitHub CLIs", Spec: "github.json", Connector: "github",
		Sets: []string{"hub manual", "git-hub manual", "gitsome help", "gist manual", "git-extras manual", "forge manual"}},
}

// ManualSetTasks reads a manual source's pages from dir (the specs
// directory) and its gold from testdata.
func ManualSetTasks(dir, testdata string, src ManualSource) ([]StepTask, error) {
	cmds, err := parseFile(filepath.Join(testdata, src.Commands), ParseCommands)
	if err != nil {
		return nil, err
	}
	return src.Tasks(filepath.Join(dir, src.Dir), cmds)
}

// TeamTasks reads one of the team's own task files (github_tasks.txt,
// github_heldout.txt, stripe_tasks.txt) from testdata.
func TeamTasks(testdata, file string) ([]Task, error) {
	return parseFile(filepath.Join(testdata, file), ParseTasks)
}

// StepTask is a task whose answer is a sequence of calls: Steps[i] lists
// the operations (alternatives) that do step i.
type StepTask struct {
	ID    string // "<command>#name" or "<command>#example-<n>"
	Query string
	Steps [][]string
}

// Half is the half of a task set a task belongs to.
type Half string

const (
	Dev  Half = "dev"  // may be looked at and tuned against
	Test Half = "test" // only scored
)

// HalfOf splits tasks by a hash of their id (FNV-1a, 32 bits): the split
// is decided before any task is read and never changes with the set.
func HalfOf(id string) Half {
	h := fnv.New32a()
	h.Write([]byte(id))
	if h.Sum32()%2 == 0 {
		return Dev
	}
	return Test
}

// ParseCommands reads gh_commands.txt: "<command> => <step> [> <step>...]",
// alternatives in a step comma separated.
func ParseCommands(r io.Reader) (map[string][][]string, error) {
	out := map[string][][]string{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cmd, rest, ok := strings.Cut(line, "=>")
		cmd = strings.TrimSpace(cmd)
		if !ok || cmd == "" {
			return nil, fmt.Errorf("line %d: want <command> => <operationId>[, ...][ > ...]", n)
		}
		steps, err := parseSteps(rest)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if _, dup := out[cmd]; dup {
			return nil, fmt.Errorf("line %d: %s listed twice", n, cmd)
		}
		out[cmd] = steps
	}
	return out, sc.Err()
}

// parseSteps reads "<step> [> <step>...]", the alternatives of a step
// comma separated.
func parseSteps(s string) ([][]string, error) {
	var steps [][]string
	for _, st := range strings.Split(s, ">") {
		var alts []string
		for _, a := range strings.Split(st, ",") {
			if a = strings.TrimSpace(a); a != "" {
				alts = append(alts, a)
			}
		}
		if len(alts) == 0 {
			return nil, errors.New("empty step")
		}
		steps = append(steps, alts)
	}
	return steps, nil
}

// ManPage is what a page says in plain words.
type ManPage struct {
	Summary  string   // the NAME line's description
	Examples []string // the example comments, in order
}

// ParseManPage reads a manual page (roff, as gh's, hub's and kubectl's
// generators write it): the description of the NAME line, and the "# ..."
// comment lines inside the EXAMPLE (or EXAMPLES) section, indented or not;
// a comment continued on the next comment line is one example.
func ParseManPage(r io.Reader) (ManPage, error) {
	var p ManPage
	var comment []string // the example comment being read
	flush := func() {
		if c := unroff(strings.Join(comment, " ")); len(strings.Fields(c)) >= 2 {
			p.Examples = append(p.Examples, c)
		}
		comment = comment[:0]
	}
	err := walkRoff(r, func(section, line string) error {
		switch section {
		case "NAME":
			nameSummary(&p.Summary, line)
		case "EXAMPLE", "EXAMPLES":
			if c, ok := strings.CutPrefix(strings.TrimSpace(line), "# "); ok {
				comment = append(comment, c)
			} else {
				flush()
			}
		}
		return nil
	}, flush)
	return p, err
}

// walkRoff calls line with each line of a roff page but its .SH lines,
// and the section (unquoted) the line is in; atSection is called at each
// .SH and at the end, to close what the section was reading.
func walkRoff(r io.Reader, line func(section, line string) error, atSection func()) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	section := ""
	for sc.Scan() {
		if sec, ok := strings.CutPrefix(sc.Text(), ".SH "); ok {
			atSection()
			section = strings.Trim(sec, `"`)
			continue
		}
		if err := line(section, sc.Text()); err != nil {
			return err
		}
	}
	atSection()
	return sc.Err()
}

// nameSummary sets *summary, if empty, to the description of a NAME line
// ("gh-issue-list \- List issues in a repository").
func nameSummary(summary *string, line string) {
	if _, desc, ok := strings.Cut(strings.ReplaceAll(line, `\-`, "-"), " - "); ok && *summary == "" {
		*summary = unroff(desc)
	}
}

// unroff undoes the roff escapes the pages use (gh's, rst2man's for
// git-hub, ronn's for gist).
func unroff(s string) string {
	s = strings.NewReplacer(`\-`, "-", `\(aq`, "'", `\(cq`, "'", `\[la]`, "<", `\[ra]`, ">", `\fB`, "", `\fR`, "", `\fI`, "", `\fC`, "", `\fP`, "",
		`\&`, "", `\%`, "", `\.`, ".", `\'`, "'", `\(bu`, "", `\\`, `\`).Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

// ManualTasks reads the manual page of every command of the mapping from
// dir (<cli>-<words>.1.gz) and returns its tasks: the summary and each example
// comment, verbatim, with the command's steps. A page the mapping names but
// dir lacks is an error.
func ManualTasks(dir string, commands map[string][][]string) ([]StepTask, error) {
	cmds := make([]string, 0, len(commands))
	for c := range commands {
		cmds = append(cmds, c)
	}
	sort.Strings(cmds)
	var out []StepTask
	for _, c := range cmds {
		file := filepath.Join(dir, strings.ReplaceAll(c, " ", "-")+".1.gz")
		p, err := parseFile(file, ParseManPage)
		if err != nil {
			return nil, err
		}
		if p.Summary == "" {
			return nil, fmt.Errorf("%s: no NAME line", file)
		}
		out = append(out, StepTask{ID: c + "#name", Query: p.Summary, Steps: commands[c]})
		for i, e := range p.Examples {
			out = append(out, StepTask{ID: fmt.Sprintf("%s#example-%d", c, i+1), Query: e, Steps: commands[c]})
		}
	}
	return out, nil
}
