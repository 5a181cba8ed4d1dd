// Package replicatest holds the behavioural tests of several gateway
// replicas sharing one state store: three gateways on loopback
// sharing one PostgreSQL behind a round-robin proxy, and the same calls
// against the embedded store with one gateway. It lives under runtime/store
// so that it can start throwaway PostgreSQL servers (internal/pgtest); it
// has no code of its own.
package replicatest
