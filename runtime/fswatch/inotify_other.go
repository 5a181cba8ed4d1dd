//go:build !linux

package fswatch

import "errors"

// errUnsupported makes New return an inert Watcher on systems without
// inotify: every handle is unwatched and callers stat as before.
var errUnsupported = errors.New("fswatch: inotify is not available on this system")

func sysInit() (int, error)                          { return -1, errUnsupported }
func sysAddWatch(int, string, uint32) (int32, error) { return -1, errUnsupported }
func sysRmWatch(int, int32)                          {}
func sysRead(int, []byte) (int, error)               { return 0, errUnsupported }
func sysClose(int) error                             { return nil }
func sysLocalFS(string) bool                         { return false }
