package diff

// SetMaxNodes sets the comparison budget for a test and returns what puts
// it back.
func SetMaxNodes(n int) (restore func()) {
	old := maxNodes
	maxNodes = n
	return func() { maxNodes = old }
}
