package discovereval

import "golang.org/x/sys/unix"

// threadCPU is the CPU time the calling OS thread has used (ns), from
// CLOCK_THREAD_CPUTIME_ID: the search's own work, without the time it
// waited for a core. ok is false when the clock cannot be read.
func threadCPU() (ns int64, ok bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}
