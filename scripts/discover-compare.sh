#!/usr/bin/env bash
# discover-compare.sh REV... : the search evaluation of this tree
# (internal/discovereval: the manual page and README sets and the team's own sets) run
# against the ranking and lowering of each REV and of the working tree, one
# after the other, with the same evaluation code and task files: each REV is
# exported (git archive) to a temporary directory and this tree's
# internal/discovereval/{manual,readme,steps}.go, {manual,readme}_test.go, testdata/ and
# (when the revision predates it) internal/testinput are copied over it.
# Prints each tree's figure lines (docs/discovery.md, "Evaluation"). Needs $ANVIL_SPECS_DIR filled by scripts/fetch-specs.sh.
# DISCOVER_COMPARE_RUN narrows the tests run (a go test -run pattern; default
# every set).
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ANVIL_SPECS_DIR="${ANVIL_SPECS_DIR:-$repo_root/.cache/specs}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
run() {
	local label="$1" dir="$2"
	echo "== $label"
	(cd "$dir" && go test -count=1 -v -run "${DISCOVER_COMPARE_RUN:-TestManualEval|TestReadmeEval|Recall}" ./internal/discovereval 2>&1 |
		grep -E 'half:|recall@1 [0-9.]+, recall@5' | sed -E 's/^ +[a-z_]+\.go:[0-9]+: //')
}
for rev in "$@"; do
	dir="$tmp/$rev"
	mkdir -p "$dir"
	git -C "$repo_root" archive "$rev" | tar -x -C "$dir"
	src="$repo_root/internal/discovereval"
	dst="$dir/internal/discovereval"
	rm -f "$dst/ghman.go" "$dst/ghman_test.go"
	cp "$src/manual.go" "$src/readme.go" "$src/steps.go" "$src/manual_test.go" "$src/readme_test.go" "$dst/"
	cp -r "$src/testdata/." "$dst/testdata/"
	# the tests' helper packages, for revisions older than them
	[ -d "$dir/internal/testinput" ] || cp -r "$repo_root/internal/testinput" "$dir/internal/"
	run "$rev" "$dir"
done
run "working tree" "$repo_root"
