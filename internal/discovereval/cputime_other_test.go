//go:build !linux

package discovereval

// threadCPU is not measured outside Linux: benchSearch reports wall time only.
func threadCPU() (int64, bool) { return 0, false }
