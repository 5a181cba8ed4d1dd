#!/usr/bin/env bash
# ci-postgres.sh makes PostgreSQL available to the runtime/store PostgreSQL
# tests on a machine that has none: it installs Debian's `postgresql`
# package (apt-get update && apt-get install -y postgresql) when no server
# binaries are found under /usr/lib/postgresql/*/bin and ANVIL_TEST_POSTGRES
# is unset. It starts nothing: each test binary starts its own throwaway
# server from those binaries (initdb + pg_ctl into a temporary directory,
# on a free loopback port, as the postgres user when run as root) and
# removes it afterwards. Running it again once installed does nothing.
#
#   scripts/ci-postgres.sh && go test -count=1 ./runtime/store/...
#
# Exit status is non-zero only when an install was needed and failed.
set -euo pipefail

found() { compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; }

if [ -n "${ANVIL_TEST_POSTGRES:-}" ]; then
	echo "ci-postgres: using the server of ANVIL_TEST_POSTGRES"
	exit 0
fi
if found; then
	echo "ci-postgres: PostgreSQL already installed: $(compgen -G '/usr/lib/postgresql/*/bin/initdb' | tr '\n' ' ')"
	exit 0
fi
if ! command -v apt-get >/dev/null; then
	echo "ci-postgres: no PostgreSQL and no apt-get to install it; set ANVIL_TEST_POSTGRES to a server's DSN" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "ci-postgres: installing postgresql needs root (or sudo)" >&2; exit 1; }
	sudo="sudo -n" # never prompt: make deps runs this unattended
fi
export DEBIAN_FRONTEND=noninteractive
echo "ci-postgres: installing Debian's postgresql package (about a minute)"
$sudo apt-get update -qq
$sudo apt-get install -y -qq postgresql >/dev/null
if ! found; then
	echo "ci-postgres: postgresql installed but no initdb under /usr/lib/postgresql/*/bin" >&2
	exit 1
fi
echo "ci-postgres: installed $(compgen -G '/usr/lib/postgresql/*/bin/initdb' | tr '\n' ' ')"
