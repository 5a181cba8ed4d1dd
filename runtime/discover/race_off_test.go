//go:build !race

package discover

// raceDetector: see race_on_test.go.
const raceDetector = false
