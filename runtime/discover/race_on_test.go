//go:build race

package discover

// raceDetector: the race detector makes sync.Pool drop entries on
// purpose, so allocation counts mean nothing under it.
const raceDetector = true
