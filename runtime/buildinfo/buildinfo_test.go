package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "-buildmode", Value: "exe"},
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "c4a51ff0123456789abcdef0123456789abcdef0"},
		{Key: "vcs.time", Value: "2026-12-02T21:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	cases := []struct {
		name     string
		bi       *debug.BuildInfo
		want     Info
		wantLine string
	}{
		{"anvil from a checkout", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: Module, Version: "(devel)"}, Settings: vcs},
			Info{Main: Module, Anvil: "(devel)", Revision: "c4a51ff0123456789abcdef0123456789abcdef0", Time: "2026-12-02T21:00:00Z", Modified: true, Go: "go1.26.8"},
			"anvil (devel), revision c4a51ff01234 (modified), go1.26.8"},
		{"CI: -buildvcs=false", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: Module, Version: "(devel)"}},
			Info{Main: Module, Anvil: "(devel)", Revision: Unknown, Go: "go1.26.8"},
			"anvil (devel), revision unknown, go1.26.8"},
		{"a generated gateway in another module", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "example.com/yard", Version: "(devel)"},
			Deps: []*debug.Module{{Path: "golang.org/x/oauth2", Version: "v0.30.0"}, {Path: Module, Version: "v0.3.1"}}, Settings: vcs[:3]},
			Info{Main: "example.com/yard", Anvil: "v0.3.1", Revision: "c4a51ff0123456789abcdef0123456789abcdef0", Go: "go1.26.8"},
			"anvil v0.3.1, revision c4a51ff01234, go1.26.8"},
		{"anvil replaced by a checkout", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "example.com/yard"},
			Deps: []*debug.Module{{Path: Module, Version: "v0.3.1", Replace: &debug.Module{Path: "../anvil"}}}},
			Info{Main: "example.com/yard", Anvil: "(devel)", Revision: Unknown, Go: "go1.26.8"},
			"anvil (devel), revision unknown, go1.26.8"},
		{"without the anvil module", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "example.com/other"}},
			Info{Main: "example.com/other", Anvil: Unknown, Revision: Unknown, Go: "go1.26.8"},
			"anvil unknown, revision unknown, go1.26.8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := FromBuildInfo(c.bi)
			if got != c.want {
				t.Errorf("FromBuildInfo = %+v, want %+v", got, c.want)
			}
			if line := got.String(); line != c.wantLine {
				t.Errorf("String = %q, want %q", line, c.wantLine)
			}
		})
	}
	if got := FromBuildInfo(nil); got.Anvil != Unknown || got.Revision != Unknown || got.Go == "" {
		t.Errorf("FromBuildInfo(nil) = %+v", got)
	}
}

func TestJSON(t *testing.T) {
	i := Info{Main: Module, Anvil: "(devel)", Revision: Unknown, Go: "go1.26.8"}
	want := `{"main":"github.com/anvil-dev/anvil","anvil":"(devel)","revision":"unknown","modified":false,"go":"go1.26.8"}`
	if got := string(i.JSON()); got != want {
		t.Errorf("JSON = %s, want %s", got, want)
	}
}

func TestVersionPair(t *testing.T) {
	for _, c := range []struct {
		info     Info
		mod, rev string
	}{
		{Info{Anvil: Unknown, Revision: Unknown, Modified: true}, Unknown, Unknown},
		{Info{Anvil: "(devel)", Revision: "abc123"}, "(devel)", "abc123"},
		{Info{Anvil: "(devel)", Revision: "abc123", Modified: true}, "(devel)", "abc123+dirty"},
	} {
		if mod, rev := c.info.versionPair(); mod != c.mod || rev != c.rev {
			t.Errorf("%+v: got %s %s, want %s %s", c.info, mod, rev, c.mod, c.rev)
		}
	}
	if mod, rev := Version(); mod == "" || rev == "" {
		t.Errorf("Version() = %q, %q", mod, rev)
	}
}
