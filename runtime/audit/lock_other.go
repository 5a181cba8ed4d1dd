//go:build !unix

package audit

import "os"

// lockFile is a no-op where flock is not available: lines from one process
// are chained in order (its mutex), several processes sharing a file are
// not.
func lockFile(*os.File) bool { return false }

// unlockFile has nothing to release where lockFile takes no lock.
func unlockFile(*os.File) {}
