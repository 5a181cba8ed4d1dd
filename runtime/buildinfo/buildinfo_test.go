package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	for _, c := range []struct {
		bi       debug.BuildInfo
		mod, rev string
	}{
		{debug.BuildInfo{}, Unknown, Unknown},
		{debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3", Unknown},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}}}, "(devel)", "abc123"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}, "(devel)", "abc123+dirty"},
		{debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}}, Unknown, Unknown},
	} {
		mod, rev := fromBuildInfo(&c.bi)
		if mod != c.mod || rev != c.rev {
			t.Errorf("%+v: got %s %s, want %s %s", c.bi, mod, rev, c.mod, c.rev)
		}
	}
	if mod, rev := Version(); mod == "" || rev == "" {
		t.Errorf("Version() = %q, %q", mod, rev)
	}
}
