package discovereval

import (
	"reflect"
	"strings"
	"testing"
)

// An excerpt of git-hub's page (rst2man): commands are italic .TP terms,
// sub-commands are indented under theirs, options are not commands.
const sectionedExcerpt = `.TH "GIT-HUB" 1
.SH NAME
git-hub \- Git command line interface to GitHub
.SH DESCRIPTION
.TP
.B \fInot\fP
Outside COMMANDS: not a command.
.SH COMMANDS
.INDENT 0.0
.TP
.B \fIclone\fP REPO [DEST]
This command is used to clone \fBREPO\fP, a GitHub repository, to a \fBDEST\fP
directory. If none is found, a fork is made.
.INDENT 7.0
.TP
.B \-U NAME, \-\-upstreamremote=NAME
Use NAME as the upstream remote.
.UNINDENT
.TP
.B \fIissue\fP
This command is used to manage GitHub issues.
.INDENT 7.0
.TP
.B \fIlist\fP
Show a list of open issues.
.INDENT 7.0
.TP
.B \-c, \-\-closed
Show closed issues instead.
.UNINDENT
.TP
.B \fIclose\fP ISSUE
Alias for \fIupdate \-\-close\fP\&. (+ \fIcomment\fP if \fB\-\-message\fP is
specified). Closes issue identified by \fBISSUE\fP\&.
.sp
A second paragraph.
.UNINDENT
.TP
.B \fIpull\fP
Pull requests.
.INDENT 7.0
.TP
.B \fIshow\fP PULL [PULL ...]
Alias for \fIissue show\fP\&.
.UNINDENT
.UNINDENT
.SH HOOK SCRIPT
.TP
.B \fIpostclone\fP
Not a command either.
`

func TestParseSectionedPage(t *testing.T) {
	got, err := ParseSectionedPage(strings.NewReader(sectionedExcerpt))
	want := map[string]string{
		"clone":       "This command is used to clone REPO, a GitHub repository, to a DEST directory.",
		"issue":       "This command is used to manage GitHub issues.",
		"issue list":  "Show a list of open issues.",
		"issue close": "Closes issue identified by ISSUE.",
		"pull":        "Pull requests.",
		"pull show":   "",
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %q %v\nwant %q", got, err, want)
	}
	src := ManualSource{Layout: SectionedPage, Prefix: "git hub"}
	tasks, err := describedTasks("page", src.Prefix, got, map[string][][]string{"git hub issue close": {{"issues/update"}}})
	if err != nil || len(tasks) != 1 || tasks[0].ID != "git hub issue close#name" || tasks[0].Query != want["issue close"] {
		t.Errorf("%+v %v", tasks, err)
	}
	// A command the page lacks, or one that is only an alias, is an error.
	for _, c := range []string{"git hub pull new", "git hub pull show", "issue list"} {
		if _, err := describedTasks("page", src.Prefix, got, map[string][][]string{c: {{"x/y"}}}); err == nil {
			t.Errorf("%s: no error", c)
		}
	}
	if _, err := ParseSectionedPage(strings.NewReader(".SH COMMANDS\n.TP\n.B \\fIa\\fP\nA.\n.TP\n.B \\fIa\\fP\nA again.\n")); err == nil {
		t.Error("a command documented twice: no error")
	}
}

// An excerpt of gitsome's githubcli.py: click commands and their
// docstrings.
const clickExcerpt = `class GitHubCli(object):
    @cli.command('create-comment')
    @click.argument('user_repo_number')
    @pass_github
    def create_comment(github, user_repo_number, text):
        """Create a comment on the given issue.

        Example(s):
            gh create-comment donnemartin/saws/1 -t "hello world"
        """
        github.create_comment(user_repo_number, text)

    def helper(self):
        """Not a command."""

    @cli.command()
    @pass_github
    def rate_limit(github):
        """Output the rate limit.  """
`

func TestParseClickHelp(t *testing.T) {
	got, err := ParseClickHelp(strings.NewReader(clickExcerpt))
	want := map[string]string{"create-comment": "Create a comment on the given issue.", "rate-limit": "Output the rate limit."}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %q %v", got, err)
	}
	for _, bad := range []string{
		"@cli.command()\ndef a(x):\n    pass\n",                              // no docstring
		"@cli.command()\ndef a(x):\n",                                        // the file ends first
		"@cli.command('a')\ndef a(x):\n    \"\"\"\n",                         // empty summary
		strings.Repeat("@cli.command()\ndef a(x):\n    \"\"\"A.\"\"\"\n", 2), // twice
	} {
		if _, err := ParseClickHelp(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// An excerpt of gist's page (ronn): prose paragraphs, each followed by the
// command line it introduces.
const flagModesExcerpt = `.SH "NAME"
\fBgist-paste\fR \- upload code to https://gist\.github\.com
.SH "Command"
.IP "\(bu" 4
To upload the contents of \fBa\.rb\fR just:
.
.IP
gist-paste a\.rb
.
.IP "\(bu" 4
You can update existing gists with \fB\-u\fR:
.
.IP
gist-paste \-u GIST_ID FILE_NAME
.
.IP "\(bu" 4
To list gists for user
.
.IP
gist-paste \-l : all gists for authed user
.IP
gist-paste \-l defunkt : list defunkt\'s public gists
.
.P
To read a gist
.
.nf

gist-paste \-r GIST_ID
.fi
.IP "\(bu" 4
See \fBgist-paste \-\-help\fR for more detail\.
.SH "Login"
.IP
Not read.
.IP
gist-paste \-\-login
`

func TestParseFlagModesPage(t *testing.T) {
	p, err := ParseFlagModesPage(strings.NewReader(flagModesExcerpt), "gist-paste")
	want := FlagModesPage{Summary: "upload code to https://gist.github.com", Uses: []FlagModeUse{
		{"To upload the contents of a.rb just", "gist-paste a.rb"},
		{"You can update existing gists with -u", "gist-paste -u GIST_ID FILE_NAME"},
		{"To list gists for user", "gist-paste -l"},
		{"all gists for authed user", "gist-paste -l"},
		{"list defunkt's public gists", "gist-paste -l defunkt"},
		{"To read a gist", "gist-paste -r GIST_ID"},
	}}
	if err != nil || !reflect.DeepEqual(p, want) {
		t.Fatalf("got %+v %v", p, err)
	}
	gold := map[string][][]string{"gist-paste": {{"gists/create"}}, "gist-paste -u": {{"gists/update"}}, "gist-paste -l": {{"gists/list"}}, "gist-paste -r": {{"gists/get"}}}
	tasks, err := flagModeTasks("page", "gist-paste", p, gold)
	if err != nil || len(tasks) != 7 {
		t.Fatalf("%+v %v", tasks, err)
	}
	ids := []string{}
	for _, tk := range tasks {
		ids = append(ids, tk.ID+" "+tk.Steps[0][0])
	}
	wantIDs := []string{"gist-paste#name gists/create", "gist-paste#example-1 gists/create", "gist-paste -u#example-1 gists/update",
		"gist-paste -l#example-1 gists/list", "gist-paste -l#example-2 gists/list", "gist-paste -l#example-3 gists/list", "gist-paste -r#example-1 gists/get"}
	if !reflect.DeepEqual(ids, wantIDs) {
		t.Errorf("got %q", ids)
	}
	// A mode of the gold the page never uses, a use with two modes' flags,
	// and a gold command of another program are errors.
	for _, g := range []map[string][][]string{
		{"gist-paste": {{"a"}}, "gist-paste -u": {{"a"}}, "gist-paste -l": {{"a"}}, "gist-paste -r": {{"a"}}, "gist-paste --delete": {{"a"}}},
		{"gist-paste": {{"a"}}, "gist-paste -u": {{"a"}}, "gist-paste -l": {{"a"}}, "gist-paste -r": {{"a"}}, "gist -x": {{"a"}}},
		{"gist-paste -u": {{"a"}}},
	} {
		if _, err := flagModeTasks("page", "gist-paste", p, g); err == nil {
			t.Errorf("%v: no error", g)
		}
	}
	two := FlagModesPage{Summary: "s", Uses: []FlagModeUse{{"x", "gist-paste -u -l"}}}
	if _, err := flagModeTasks("page", "gist-paste", two, gold); err == nil {
		t.Error("two modes: no error")
	}
}

// An excerpt of Forge's manual (Texinfo): commands under table items'
// index entries, and under @deffn.
const texinfoExcerpt = `@table @asis
@item @kbd{N c p} (@code{forge-create-pullreq})
@itemx @kbd{C-c C-n [on "Pull requests" section]}
@kindex N c p
@findex forge-create-pullreq
This command creates a new pull-request for the current
repository.  It is the @strong{second} sentence.

@item @kbd{m M} (@code{forge-merge})
@findex forge-merge
This command merges the current pull-request using the forge's API@.
@end table

@deffn Command forge-list-owned-issues
This command lists open issues from all the repositories that
you own.  Options @code{forge-owned-accounts} control which.
@end deffn

@item @kbd{N a} (@code{forge-merge})
@findex forge-merge
A second description is not read.
@findex forge-nothing
@end table
`

func TestParseTexinfoCommands(t *testing.T) {
	got, err := ParseTexinfoCommands(strings.NewReader(texinfoExcerpt))
	want := map[string]string{
		"forge-create-pullreq":    "This command creates a new pull-request for the current repository.",
		"forge-merge":             "This command merges the current pull-request using the forge's API.",
		"forge-list-owned-issues": "This command lists open issues from all the repositories that you own.",
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %q %v", got, err)
	}
	tasks, err := describedTasks("manual", "", got, map[string][][]string{"forge-merge": {{"pulls/merge"}}})
	if err != nil || len(tasks) != 1 || tasks[0].ID != "forge-merge#name" {
		t.Errorf("%+v %v", tasks, err)
	}
	if _, err := describedTasks("manual", "", got, map[string][][]string{"forge-nothing": {{"a/b"}}}); err == nil {
		t.Error("a command without a description: no error")
	}
}
