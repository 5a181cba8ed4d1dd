//go:build !unix

package vault

import "os"

// openRegular opens path for reading only if it is a regular file (checked
// before the open, and again on the opened file).
func openRegular(path string) (*os.File, os.FileInfo, error) {
	if fi, err := os.Lstat(path); err != nil {
		return nil, nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fi, errNotRegular
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = errNotRegular
		}
		return nil, nil, err
	}
	return f, fi, nil
}
