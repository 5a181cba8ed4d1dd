//go:build unix

package audit

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on f for one line (flock), so
// that gateway processes sharing an audit file chain their lines in the
// order they append them. The lock goes with the process if it dies. It
// reports whether it holds the lock (a file system without locks: one
// process is still chained); unlockFile releases it.
func lockFile(f *os.File) bool {
	fd := int(f.Fd())
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX)
		if err == syscall.EINTR {
			continue
		}
		return err == nil
	}
}

// unlockFile releases lockFile's lock.
func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
