// Package templates holds the text/template trees Anvil's emitters render:
// python/, typescript/ and bin/ (the harness SDKs and CLI), skill/ (SKILL.md
// and reference/), and index/ (INDEX.md). Each tree mirrors the files it
// produces; "__pkg__" and "__connector__" in a path stand for the Python
// package and the connector id, ".tmpl" is dropped, and files ending in
// ".partial.tmpl" only define templates for the others.
package templates

import "embed"

// FS holds every template tree. The all: prefix keeps files whose names start
// with "_" (such as __init__.py.tmpl and _gateway.py.tmpl).
//
//go:embed all:python all:typescript all:bin all:skill all:index
var FS embed.FS
