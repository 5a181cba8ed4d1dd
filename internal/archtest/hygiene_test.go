package archtest

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxTrackedSize bounds a tracked file outside golden/ and gen/ (whose
// generated trees may be large): a larger one is a build output, a data
// dump or a binary that does not belong in the repository.
const maxTrackedSize = 5 << 20

// TestNoBinariesOrHugeFiles fails when a tracked file is an executable
// binary (ELF, Mach-O or PE, by its magic number), has the executable bit
// without being a script (#!), or is larger than maxTrackedSize outside
// golden/ and gen/ (issue 25: a 35 MB compiled loadgen was merged once).
func TestNoBinariesOrHugeFiles(t *testing.T) {
	out, err := exec.Command("git", "-C", repoRoot, "ls-files", "-s", "-z").Output()
	if err != nil {
		t.Skipf("git ls-files: %v (the hygiene check needs a git checkout)", err)
	}
	n := 0
	for _, entry := range strings.Split(string(out), "\x00") {
		if entry == "" {
			continue
		}
		// <mode> <object> <stage>\t<path>
		meta, path, ok := strings.Cut(entry, "\t")
		if !ok {
			t.Fatalf("unexpected git ls-files line %q", entry)
		}
		mode, _, _ := strings.Cut(meta, " ")
		if mode == "120000" || mode == "160000" { // symlink, submodule
			continue
		}
		n++
		full := filepath.Join(repoRoot, filepath.FromSlash(path))
		fi, err := os.Stat(full)
		if err != nil {
			continue // deleted in the work tree, not yet committed
		}
		if fi.Size() > maxTrackedSize && !under(path, "golden") && !under(path, "gen") {
			t.Errorf("%s is %d bytes, over %d: build outputs and data dumps stay out of the repository", path, fi.Size(), maxTrackedSize)
		}
		head, err := readHead(full, 4096)
		if err != nil {
			t.Fatal(err)
		}
		if kind := binaryKind(head); kind != "" {
			t.Errorf("%s is a compiled %s executable: build outputs stay out of the repository (add it to .gitignore)", path, kind)
		} else if mode == "100755" && !bytes.HasPrefix(head, []byte("#!")) {
			t.Errorf("%s is executable (mode 100755) but not a script (#!): clear the bit with git update-index --chmod=-x", path)
		}
	}
	if n == 0 {
		t.Fatal("git ls-files listed no files")
	}
}

// readHead returns at most n bytes from the start of a file.
func readHead(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

// binaryKind names the executable format whose magic number head starts
// with ("" for none): ELF; Mach-O (32 and 64 bit, either byte order, and
// universal binaries); PE ("MZ" whose header points at "PE\0\0").
func binaryKind(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x7fELF")):
		return "ELF"
	case len(head) >= 4:
		switch binary.BigEndian.Uint32(head) {
		case 0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe, 0xcafebabe:
			return "Mach-O"
		}
	}
	if len(head) >= 0x40 && bytes.HasPrefix(head, []byte("MZ")) {
		off := int(binary.LittleEndian.Uint32(head[0x3c:]))
		if off >= 0x40 && off+4 <= len(head) && bytes.Equal(head[off:off+4], []byte("PE\x00\x00")) {
			return "PE"
		}
	}
	return ""
}

// TestBinaryKind: the magic numbers are recognised, text is not.
func TestBinaryKind(t *testing.T) {
	pe := make([]byte, 0x80)
	copy(pe, "MZ")
	binary.LittleEndian.PutUint32(pe[0x3c:], 0x40)
	copy(pe[0x40:], "PE\x00\x00")
	for _, c := range []struct {
		head []byte
		want string
	}{
		{[]byte("\x7fELF\x02\x01\x01"), "ELF"},
		{[]byte{0xcf, 0xfa, 0xed, 0xfe, 7, 0, 0, 1}, "Mach-O"},
		{[]byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2}, "Mach-O"},
		{pe, "PE"},
		{append([]byte("MZ is a text file that starts like a PE header"), make([]byte, 0x40)...), ""},
		{[]byte("#!/bin/sh\necho hi\n"), ""},
		{[]byte("package main\n"), ""},
		{nil, ""},
	} {
		if got := binaryKind(c.head); got != c.want {
			t.Errorf("binaryKind(%q) = %q, want %q", c.head[:min(len(c.head), 8)], got, c.want)
		}
	}
}
