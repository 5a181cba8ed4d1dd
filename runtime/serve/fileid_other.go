//go:build !unix

package serve

import "os"

// fileID is empty where the file system identity is not at hand.
func fileID(os.FileInfo) string { return "" }
