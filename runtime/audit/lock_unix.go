//go:build unix

package audit

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on f for one line (flock), so
// that gateway processes sharing an audit file chain their lines in the
// order they append them. The lock goes with the process if it dies.
func lockFile(f *os.File) (unlock func()) {
	fd := int(f.Fd())
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return func() {} // a file system without locks: one process is still chained
		}
		return func() { _ = syscall.Flock(fd, syscall.LOCK_UN) }
	}
}
