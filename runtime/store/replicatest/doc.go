// Package replicatest holds the behavioural tests of several gateway
// replicas sharing one state store: three gateways on loopback
// sharing one PostgreSQL behind a round-robin proxy, and the same calls
// against the embedded store with one gateway, including a replica killed
// with SIGKILL in the middle of a keyed write. Throwaway PostgreSQL servers
// come from internal/pgtest; the package has no code of its own.
package replicatest
