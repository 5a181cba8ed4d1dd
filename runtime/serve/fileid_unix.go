//go:build unix

package serve

import (
	"fmt"
	"os"
	"syscall"
)

// fileID is the file's device and inode: an atomic replacement with the
// same size and mtime still changes it.
func fileID(fi os.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d.%d", st.Dev, st.Ino)
	}
	return ""
}
