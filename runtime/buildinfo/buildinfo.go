// Package buildinfo says what a binary was built from: its main module's
// version and the VCS revision the go command stamped into it, read with
// runtime/debug.ReadBuildInfo. Either is "unknown" when the binary does not
// carry it (a test binary, a build with -buildvcs=false).
package buildinfo

import "runtime/debug"

// Unknown stands for a version or revision the binary does not record.
const Unknown = "unknown"

// Version returns the main module's version and VCS revision (a "+dirty"
// suffix marks a build from a modified tree).
func Version() (module, revision string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Unknown, Unknown
	}
	return fromBuildInfo(bi)
}

func fromBuildInfo(bi *debug.BuildInfo) (module, revision string) {
	module, revision = bi.Main.Version, Unknown
	if module == "" {
		module = Unknown
	}
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if s.Value != "" {
				revision = s.Value
			}
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && revision != Unknown {
		revision += "+dirty"
	}
	return module, revision
}
