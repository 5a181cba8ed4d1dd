// Package archtest holds the tests that enforce the dependency direction of
// DESIGN.md: runtime and gen never import the compiler, templates or the
// parser and code generation libraries; the compiler imports only runtime/air
// and runtime/envelope from the runtime, and inside it the direction is
// front end → lower → emit; the packages of a tools/call (serve, frontdoor,
// executor, fleet, handler) import only the ones after them; generated trees
// import only the handler API (runtime/handler, runtime/serve and the AIR,
// effect, audit and upstream packages they call directly) from the runtime.
package archtest
