// Package archtest holds the tests that enforce the dependency direction of
// docs/ARCHITECTURE.md: runtime and gen never import the compiler, templates
// or the parser and code generation libraries; the compiler imports only
// runtime/air, runtime/envelope and runtime/canon from the runtime, and inside it the direction is
// front end → lower → emit, and the commands under cmd/ reach the
// emitters only through the compiler's pipeline (package compiler); the rooms of a tools/call (serve, frontdoor, the
// doors, executor, catalog and credential, fleet, handler) import only the
// ones after them, a door never another door, and only serve builds state
// and identity; generated trees import only the handler API (runtime/handler,
// runtime/serve and the AIR and effect packages whose types and constants
// they name) from the runtime.
// It also keeps the documentation honest: docs/ARCHITECTURE.md names every
// runtime and compiler package and nothing that does not exist, and README.md
// and docs/*.md link and cite only files the repository contains; and the
// repository holds no compiled executable and no file over 5 MB outside the
// generated trees.
package archtest
