// Package buildinfo says what a binary was built from: the version of the
// Anvil module it links (the main module for bin/anvil, a dependency for a
// gateway generated into another module) and the version control revision of
// the main module, as the go command recorded them (runtime/debug).
//
// Nothing here is guessed: a build without VCS stamping (-buildvcs=false, as
// CI builds, or a build outside a checkout) has the revision "unknown", and a
// module built from its working tree has the version "(devel)".
package buildinfo

import (
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
)

// Module is the import path of the Anvil module.
const Module = "github.com/anvil-dev/anvil"

// Unknown stands for what the binary does not record.
const Unknown = "unknown"

// Info is what a binary records about its build. Its JSON form has the keys
// main, anvil, revision, time, modified and go, in that order.
type Info struct {
	// Main is the main module's path ("" when not recorded).
	Main string `json:"main"`
	// Anvil is the Anvil module's version: "(devel)" for a build from a
	// working tree, v… for a released or pseudo-version, "unknown" when the
	// binary does not link the Anvil module or records no module data.
	Anvil string `json:"anvil"`
	// Revision is the main module's VCS revision, or "unknown".
	Revision string `json:"revision"`
	// Time is the revision's commit time (RFC 3339), or "".
	Time string `json:"time,omitempty"`
	// Modified is true when the working tree had uncommitted changes.
	Modified bool `json:"modified"`
	// Go is the Go version that built the binary.
	Go string `json:"go"`
}

// Read returns the running binary's Info.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return FromBuildInfo(nil)
	}
	return FromBuildInfo(bi)
}

// FromBuildInfo extracts Info from bi; a nil bi (a binary built without
// module support) gives every field "unknown" but Go.
func FromBuildInfo(bi *debug.BuildInfo) Info {
	info := Info{Anvil: Unknown, Revision: Unknown, Go: runtime.Version()}
	if bi == nil {
		return info
	}
	if bi.GoVersion != "" {
		info.Go = bi.GoVersion
	}
	info.Main = bi.Main.Path
	if v := moduleVersion(bi); v != "" {
		info.Anvil = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if s.Value != "" {
				info.Revision = s.Value
			}
		case "vcs.time":
			info.Time = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// moduleVersion is the Anvil module's version in bi: the main module's, or
// the dependency's (its replacement's, when replaced by another version).
func moduleVersion(bi *debug.BuildInfo) string {
	if bi.Main.Path == Module {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path != Module {
			continue
		}
		if d.Replace != nil {
			if d.Replace.Version != "" {
				return d.Replace.Version
			}
			return "(devel)" // replaced by a directory
		}
		return d.Version
	}
	return ""
}

// String is one line: "anvil <version>, revision <rev>[ (modified)], <go>"
// with the revision cut to 12 characters.
func (i Info) String() string {
	var b strings.Builder
	b.WriteString("anvil ")
	b.WriteString(i.Anvil)
	b.WriteString(", revision ")
	rev := i.Revision
	if len(rev) > 12 && rev != Unknown {
		rev = rev[:12]
	}
	b.WriteString(rev)
	if i.Modified {
		b.WriteString(" (modified)")
	}
	b.WriteString(", ")
	b.WriteString(i.Go)
	return b.String()
}

// JSON is Info's JSON encoding (one object, no trailing newline).
func (i Info) JSON() []byte {
	b, _ := json.Marshal(i) // strings and a bool: cannot fail
	return b
}

// Version returns the Anvil module's version and the VCS revision, with
// "+dirty" when the working tree was modified: what /readyz reports.
func Version() (module, revision string) {
	return Read().versionPair()
}

func (i Info) versionPair() (module, revision string) {
	revision = i.Revision
	if i.Modified && revision != Unknown {
		revision += "+dirty"
	}
	return i.Anvil, revision
}
