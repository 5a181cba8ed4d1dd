//go:build unix

package vault

import (
	"os"
	"syscall"
)

// openRegular opens path for reading only if it is a regular file. The open
// is non-blocking (a FIFO or device would otherwise block it until a writer
// comes, with the store's lock held) and the opened file is checked with
// fstat, so what is read is what was checked.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fi, errNotRegular
	}
	return f, fi, nil
}
