package discovereval

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/anvil-dev/anvil/internal/testinput"
)

// readmeFloors hold each README set's test half to figures just under
// those measured when the set was added (docs/discovery.md): a regression
// guard. Zero: not guarded (Spotify's test half has one multi-step task).
var readmeFloors = map[string]StepReport{
	"spotify readme": {Recall1: 0.75, Recall5: 0.95},
}

// readmeCounts are what the pinned READMEs hold under ParseReadme's rule:
// a change means the parser, the rule or the input moved.
var readmeCounts = map[string]ReadmeStats{
	"spotify readme": {Examples: 100, Duplicates: 11, Unscored: 12},
}

// TestReadmeEval scores runtime/discover and plain BM25 on the client
// library README task sets, both halves, and holds the test halves to
// their floors. Only the dev halves' misses are printed
// (ANVIL_DISCOVER_MISSES set).
func TestReadmeEval(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, src := range ReadmeSources {
		t.Run(strings.ReplaceAll(src.Name, " ", "_"), func(t *testing.T) {
			for _, f := range src.Files {
				testinput.File(t, filepath.Join(specsDir(), f), "scripts/fetch-specs.sh fetches it")
			}
			tasks, st, err := ReadmeSetTasks(specsDir(), "testdata", src)
			if err != nil {
				t.Fatal(err)
			}
			if st != readmeCounts[src.Name] {
				t.Errorf("read %+v, want %+v", st, readmeCounts[src.Name])
			}
			dev := 0
			for _, k := range tasks {
				if HalfOf(k.ID) == Dev {
					dev++
				}
			}
			t.Logf("%s: %d commented calls, %d duplicates, %d not scored (no API operation); %d tasks: %d dev, %d test",
				src.Name, st.Examples, st.Duplicates, st.Unscored, len(tasks), dev, len(tasks)-dev)
			scoreHalves(t, src.Name, tasks, src.Spec, src.Connector, readmeFloors[src.Name])
		})
	}
}

func TestParseReadme(t *testing.T) {
	ex, err := ParseReadme(strings.NewReader("# Lib\n\n" +
		"// not in a code block\nclient.getThing(1)\n\n" +
		"```js\n" +
		"var Lib = require('lib');\n" +
		"// Construct the client\n" +
		"var api = new Lib({ id: 'x' });\n" +
		"```\n\n" +
		"```javascript\n" +
		"// Get an album\n" +
		"api.getAlbum('1')\n" +
		"  .then(function(data) {\n" +
		"    // handle the answer\n" +
		"    console.log(data.body);\n" +
		"  });\n" +
		"\n" +
		"// Remove a track\n" +
		"// from a playlist\n" +
		"var tracks = [1];\n" +
		"\n" +
		"api.removeTracks('p', tracks).then(done);\n" +
		"api.getPlaylist('p');\n" +
		"\n" +
		"/* Get the tracks of an album */\n" +
		"api\n" +
		"  .getAlbum('1')\n" +
		"  .then(function(d) { return api.getTracks(d.ids); });\n" +
		"/**\n" +
		" * Section heading\n" +
		" */\n" +
		"api.getMe();\n" +
		"\n" +
		"// keep the promise to abort it\n" +
		"prev = api.search('q');\n" +
		"// the comment of a call of another object\n" +
		"other.getAlbum('1');\n" +
		"   // Indented comment\n" +
		"api.play();\n" +
		"```\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []ReadmeExample{
		{Comment: "Get an album", Calls: []string{"getAlbum"}},
		{Comment: "Remove a track from a playlist", Calls: []string{"removeTracks", "getPlaylist"}},
		{Comment: "Get the tracks of an album", Calls: []string{"getAlbum", "getTracks"}},
		{Comment: "Indented comment", Calls: []string{"play"}},
	}
	if !reflect.DeepEqual(ex, want) {
		t.Errorf("got %+v\nwant %+v", ex, want)
	}
}

func TestReadmeTasks(t *testing.T) {
	methods := map[string][][]string{
		"getAlbum":       {{"get-an-album"}},
		"getTracks":      {{"get-several-tracks"}},
		"setAccessToken": {{NoOperation}},
	}
	tasks, st, err := ReadmeTasks([]ReadmeExample{
		{Comment: "Get an album", Calls: []string{"getAlbum"}},
		{Comment: "get an album", Calls: []string{"getAlbum"}}, // the other README's copy
		{Comment: "Tracks of an album", Calls: []string{"getAlbum", "setAccessToken", "getTracks"}},
		{Comment: "Set the token", Calls: []string{"setAccessToken", "getAlbum"}},
	}, methods)
	if err != nil {
		t.Fatal(err)
	}
	want := []StepTask{
		{ID: "get an album", Query: "Get an album", Steps: [][]string{{"get-an-album"}}},
		{ID: "tracks of an album", Query: "Tracks of an album", Steps: [][]string{{"get-an-album"}, {"get-several-tracks"}}},
	}
	if !reflect.DeepEqual(tasks, want) || st != (ReadmeStats{Examples: 4, Duplicates: 1, Unscored: 1}) {
		t.Errorf("got %+v %+v", tasks, st)
	}
	if _, _, err := ReadmeTasks([]ReadmeExample{{Comment: "x", Calls: []string{"unlisted"}}}, methods); err == nil || !strings.Contains(err.Error(), "unlisted") {
		t.Errorf("unlisted method: %v", err)
	}
}
