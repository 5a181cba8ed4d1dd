#!/usr/bin/env bash
# fuzz.sh [FUZZTIME] [PACKAGE...]: run every fuzz target of the packages (by
# default ./... of the current directory) for FUZZTIME each (default 10s),
# building each fuzzed package's test binary once.
#
# `go test -fuzz` fuzzes one target per invocation, relinks the instrumented
# test binary every time, and instruments every package the test binary
# links; on a cold cache those builds were most of CI's time. Here each package
# is built once with `go test -c` and the coverage instrumentation of
# `go test -fuzz` (the compiler's -d=libfuzzer), and the binary is run once per
# target from the package's directory, as `go test` runs it, so corpora and
# crashers live in testdata/fuzz as usual and the generated corpus goes where
# `go test -fuzz` keeps it ($GOCACHE/fuzz/<import path>).
#
# Instrumented: the package and everything it imports, standard library
# included, less the packages cmd/go leaves out (below). Not instrumented: the
# packages only its tests import (oracles, benchmark baselines such as
# libopenapi, test servers): the fuzz targets exercise the package, so their
# coverage would not guide the fuzzer, and left alone they are the very
# objects `go test` already built, instead of the bulk of a cold build.
# FUZZ_INSTRUMENT=module narrows the instrumentation to the main module's own
# packages: the standard library and third-party code are then the objects
# `go test` built too, and the fuzzer is guided by the module's branches only.
#
# A run fails when a target fails (a crasher: its output, with the failing
# input's file under testdata/fuzz, is printed) or when a binary reports that
# it fuzzes without coverage guidance. The fuzzing engine's own "context
# deadline exceeded" (a worker still busy with one slow input when FUZZTIME
# ends, with no failing input) is reported as a warning.
set -euo pipefail
GO=${GO:-go}
instrument=${FUZZ_INSTRUMENT:-imports}
case $instrument in
imports) all=all ;;
module) all="$($GO list -m)/..." ;;
*) echo "fuzz: FUZZ_INSTRUMENT is imports or module, not $instrument" >&2; exit 2 ;;
esac
fuzztime=${1:-10s}
shift || true

# cmd/go's skip list (cmd/go/internal/test: skipInstrumentation): packages the
# testing and fuzzing machinery runs concurrently with the target, whose
# coverage would only add noise to the guidance.
skip="context internal/fuzz internal/godebug internal/runtime/maps internal/sync reflect runtime sync sync/atomic syscall testing time"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cachedir=${FUZZ_CACHEDIR:-$($GO env GOCACHE)/fuzz} # generated corpora, per import path

# One line per package with fuzz targets: import path, directory, targets.
# Test files come from go list, so build constraints apply as in go test.
$GO list -f '{{.ImportPath}} {{.Dir}}{{range .TestGoFiles}} {{.}}{{end}}{{range .XTestGoFiles}} {{.}}{{end}}' "${@:-./...}" |
while read -r pkg dir files; do
	[ -n "$files" ] || continue
	targets=$(cd "$dir" && sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $files | sort)
	[ -z "$targets" ] || echo "$pkg $dir" $targets
done >"$work/plan"

npkg=$(wc -l <"$work/plan")
ntarget=$(awk '{n += NF - 2} END {print n + 0}' "$work/plan")
echo "fuzz: $ntarget targets in $npkg packages, $fuzztime each (instrumented: $instrument)"
start=$SECONDS
i=0
while read -r pkg dir targets; do
	i=$((i + 1))
	bin="$work/$i.test"
	t0=$SECONDS
	# The last -gcflags a package matches wins: instrument all (or the
	# module), then clear the flags of the skipped and of the test-only
	# packages.
	gcflags=("-gcflags=$all=-d=libfuzzer")
	for p in $skip $(comm -13 <($GO list -deps "$pkg" | sort) \
		<($GO list -deps -test "$pkg" | grep -v -e ' \[' -e '\.test$' | sort)); do
		gcflags+=("-gcflags=$p=")
	done
	if ! $GO test -c -o "$bin" "${gcflags[@]}" "$pkg" >"$work/build.log" 2>&1; then
		cat "$work/build.log"
		echo "fuzz: cannot build $pkg" >&2
		exit 1
	fi
	echo "fuzz: [$i/$npkg] built $pkg in $((SECONDS - t0))s"
	for t in $targets; do
		t0=$SECONDS
		log="$work/$t.log"
		if (cd "$dir" && "$bin" -test.run='^$' -test.fuzz="^$t\$" -test.fuzztime="$fuzztime" \
			-test.fuzzcachedir="$cachedir/$pkg" -test.paniconexit0 -test.timeout=10m) >"$log" 2>&1; then
			status=ok
		elif grep -q 'Failing input written' "$log" || ! grep -q 'context deadline exceeded' "$log"; then
			cat "$log"
			echo "fuzz: $pkg $t FAILED" >&2
			exit 1
		else
			status="ok (warning: a worker was still running one input when $fuzztime ran out; no crasher found)"
		fi
		if grep -q 'without coverage guidance' "$log"; then
			cat "$log"
			echo "fuzz: $pkg $t ran without coverage instrumentation" >&2
			exit 1
		fi
		echo "fuzz:   $t $status in $((SECONDS - t0))s ($(grep -o 'new interesting: [0-9]*' "$log" | tail -1 || true))"
	done
done <"$work/plan"
echo "fuzz: done in $((SECONDS - start))s"
