package discovereval

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Tasks from the README of an API's client library: its code examples put
// a comment over a call ("// Get albums by a certain artist" over
// spotifyApi.getArtistAlbums(...)). The library's authors wrote the comment
// to say what the call does; the method's API operations
// (testdata/<api>_methods.txt) are the gold.

// ReadmeSource is one API's client library READMEs over its description.
type ReadmeSource struct {
	Name      string   // "spotify readme"
	Spec      string   // the API description under the specs directory
	Connector string   //
	Files     []string // the READMEs under the specs directory, in order
	Methods   string   // the gold, under testdata/
}

// ReadmeSources are the README task sets, in the order they are reported
// (docs/discovery.md, "Evaluation").
var ReadmeSources = []ReadmeSource{{
	Name:      "spotify readme",
	Spec:      "spotify.json",
	Connector: "spotify",
	Files:     []string{"spotify-web-api-node-readme/README.md", "spotify-web-api-js-readme/README.md"},
	Methods:   "spotify_methods.txt",
}}

// NoOperation is the step a methods file gives a method that calls no API
// operation (it keeps credentials, authorizes, configures the library).
const NoOperation = "-"

// ReadmeExample is a commented call in a README's code.
type ReadmeExample struct {
	Comment string   // the comment's text: markers stripped, lines joined
	Calls   []string // the client methods its statement calls, in order
}

var (
	// newBinding finds a variable bound to a constructed object: in a
	// client library's README, the client (`var spotifyApi = new
	// SpotifyWebApi()`, `var s = new Spotify()`).
	newBinding = regexp.MustCompile(`\b(?:var|let|const)\s+([A-Za-z_$][\w$]*)\s*=\s*new\s+[A-Za-z_$][\w$.]*\s*\(`)
	// callOf finds a method call on a receiver, also across a line break
	// (`spotifyApi\n  .getAlbum(`).
	callOf = regexp.MustCompile(`([A-Za-z_$][\w$]*)\s*\.\s*([A-Za-z_$][\w$]*)\s*\(`)
)

// ParseReadme reads a README's fenced code blocks and returns each comment
// that precedes a call of the client, with the calls it describes. The
// rule, stated before any comment was read:
//   - a comment is a run of consecutive comment lines (`// text`, or
//     `/* text */` on one line), inside a code block; a block comment over
//     several lines is a section heading, never a task;
//   - the client is every variable the README binds to `new X(...)`;
//   - the comment's scope runs to the next comment line or the end of its
//     code block; the comment is a task when the first call of the client
//     in its scope is a statement of its own (its line starts with the
//     client, or with return or await and then the client; not an
//     assignment or declaration, whose comment says what the variable is
//     for), and that statement runs from the call to the next blank line;
//   - the statement's client calls, in order, are the task's calls (a
//     promise chain that feeds one call's answer into the next is a
//     multi-step task).
//
// So a comment over code that calls nothing ("handle error" in a
// callback) is no task.
func ParseReadme(r io.Reader) ([]ReadmeExample, error) {
	var lines []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	clients := map[string]bool{}
	inBlock := false
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inBlock = !inBlock
		} else if inBlock {
			for _, m := range newBinding.FindAllStringSubmatch(l, -1) {
				clients[m[1]] = true
			}
		}
	}
	var out []ReadmeExample
	var comment []string // the comment being read
	var scope []string   // the code lines after it
	flush := func() {
		if len(comment) > 0 {
			if calls := statementCalls(scope, clients); len(calls) > 0 {
				out = append(out, ReadmeExample{Comment: strings.Join(strings.Fields(strings.Join(comment, " ")), " "), Calls: calls})
			}
		}
		comment, scope = nil, nil
	}
	inBlock = false
	inBlockComment := false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "```"):
			flush()
			inBlock, inBlockComment = !inBlock, false
		case !inBlock:
		case inBlockComment:
			inBlockComment = !strings.Contains(t, "*/")
		case strings.HasPrefix(t, "//"):
			if len(scope) > 0 {
				flush()
			}
			comment = append(comment, strings.TrimSpace(strings.TrimPrefix(t, "//")))
		case strings.HasPrefix(t, "/*"):
			if len(scope) > 0 {
				flush()
			}
			body, closed := strings.CutSuffix(t, "*/")
			if closed && len(t) >= 4 {
				comment = append(comment, strings.TrimSpace(strings.TrimLeft(body, "/*")))
			} else {
				// A heading over several lines: it ends the scope before it
				// and is no task itself.
				flush()
				inBlockComment = !strings.Contains(t[2:], "*/")
			}
		case len(comment) > 0:
			scope = append(scope, l)
		}
	}
	flush()
	return out, nil
}

// statementCalls returns the client methods called by the statement that
// makes the first client call in scope, which ends at the next blank line.
func statementCalls(scope []string, clients map[string]bool) []string {
	text := strings.Join(scope, "\n")
	at := firstCall(text, clients)
	if at < 0 {
		return nil
	}
	first := strings.Count(text[:at], "\n")
	if lead := strings.TrimSpace(text[strings.LastIndexByte(text[:at], '\n')+1 : at]); lead != "" && lead != "return" && lead != "await" {
		// The call's value is assigned or declared: the comment says
		// what the variable is for, not what the call does.
		return nil
	}
	end := first + 1
	for end < len(scope) && strings.TrimSpace(scope[end]) != "" {
		end++
	}
	var calls []string
	for _, m := range callOf.FindAllStringSubmatch(strings.Join(scope[first:end], "\n"), -1) {
		if clients[m[1]] {
			calls = append(calls, m[2])
		}
	}
	return calls
}

// firstCall is the offset of the first client call in s, or -1.
func firstCall(s string, clients map[string]bool) int {
	for _, m := range callOf.FindAllStringSubmatchIndex(s, -1) {
		if clients[s[m[2]:m[3]]] {
			return m[0]
		}
	}
	return -1
}

// ReadmeStats counts what became of a README set's commented calls.
type ReadmeStats struct {
	Examples   int // commented calls in all the READMEs
	Duplicates int // of them, a comment text seen before (counted once)
	// Unscored counts the distinct tasks whose first call is NoOperation.
	Unscored int
}

// ReadmeTasks turns examples into tasks: the comment, verbatim, with the
// steps of its calls' methods (a method the methods file lacks is an
// error; NoOperation calls are no step, and a task whose first call is one
// is not scored). A comment text seen before, in any letter case, is
// counted once: the READMEs share examples, one capitalised and one not. A
// task's id is its text in lower case, so the half it falls in does not
// depend on which README showed it first.
func ReadmeTasks(examples []ReadmeExample, methods map[string][][]string) ([]StepTask, ReadmeStats, error) {
	st := ReadmeStats{Examples: len(examples)}
	seen := map[string]bool{}
	var out []StepTask
	for _, e := range examples {
		id := strings.ToLower(e.Comment)
		if seen[id] {
			st.Duplicates++
			continue
		}
		seen[id] = true
		var steps [][]string
		for i, c := range e.Calls {
			s, ok := methods[c]
			if !ok {
				return nil, st, fmt.Errorf("%q calls %s, which the methods file does not list", e.Comment, c)
			}
			if len(s) == 1 && len(s[0]) == 1 && s[0][0] == NoOperation {
				if i == 0 {
					break
				}
				continue
			}
			steps = append(steps, s...)
		}
		if len(steps) == 0 {
			st.Unscored++
			continue
		}
		out = append(out, StepTask{ID: id, Query: e.Comment, Steps: steps})
	}
	return out, st, nil
}

// ReadmeSetTasks reads a source's READMEs from dir (the specs directory)
// and its methods file from testdata.
func ReadmeSetTasks(dir, testdata string, src ReadmeSource) ([]StepTask, ReadmeStats, error) {
	f, err := os.Open(filepath.Join(testdata, src.Methods))
	if err != nil {
		return nil, ReadmeStats{}, err
	}
	defer f.Close()
	methods, err := ParseCommands(f)
	if err != nil {
		return nil, ReadmeStats{}, fmt.Errorf("%s: %w", src.Methods, err)
	}
	var examples []ReadmeExample
	for _, name := range src.Files {
		ex, err := readReadme(filepath.Join(dir, name))
		if err != nil {
			return nil, ReadmeStats{}, err
		}
		examples = append(examples, ex...)
	}
	return ReadmeTasks(examples, methods)
}

func readReadme(file string) ([]ReadmeExample, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ex, err := ParseReadme(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return ex, nil
}
