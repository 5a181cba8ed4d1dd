// Package archtest holds the test that enforces the dependency direction of
// DESIGN.md: runtime and gen never import the compiler, templates or the
// parser and code generation libraries; the compiler imports only runtime/air
// and runtime/envelope from the runtime.
package archtest
