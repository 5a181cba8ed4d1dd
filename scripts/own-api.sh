#!/usr/bin/env bash
# Your own API in five commands, end to end, exactly as README's "Your own
# API in five commands" writes it: the script takes README's two ```sh
# blocks of that section and runs them verbatim, in one shell, from an
# empty directory holding examples/petstore/openapi.yaml as openapi.yaml,
# with a clean home directory (so the gateway makes its development vault
# key there) and `anvil` on PATH. The only things it adds are what README
# says the reader provides: the API's key ($PETSTORE_KEY) and the egress
# allowlist, here for a mock upstream on loopback that stands in for the
# API (ANVIL_UPSTREAM_PETSTORE_URL, ANVIL_ALLOWED_HOSTS=127.0.0.1); and, when
# port 8931 is taken, another free port in its place. Then it checks what
# happened: the starting manifest against schemas/anvil.manifest.schema.json
# with Python's jsonschema (a validator that is not Anvil's), no diagnostic,
# the development key (0600) and the startup report naming it, the read and
# the confirmed write at the upstream, and one more read and confirmed write
# through the Python SDK without a token file.
#
# Usage: scripts/own-api.sh [work-dir]   (ANVIL=<binary> to skip the build)
# Loopback only; every process it starts is stopped when it exits.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-}
if [ -z "$work" ]; then
	work=$(mktemp -d)
	trap_rm=$work
else
	mkdir -p "$work"
	trap_rm=
fi
work=$(cd "$work" && pwd)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [ -n "$trap_rm" ]; then rm -rf "$trap_rm"; fi
}
trap cleanup EXIT

step() { printf '== %s\n' "$*"; }
die() {
	printf 'own-api: %s\n' "$*" >&2
	for f in "$work"/*.log; do [ -f "$f" ] && { printf -- '--- %s\n' "$f" >&2; tail -n 20 "$f" >&2; }; done
	exit 1
}

# README's blocks: every ```sh block of the section, in order.
readme_blocks() {
	awk '
		/^## / { in_section = ($0 == "## Your own API in five commands") }
		in_section && /^```sh$/ { in_block = 1; next }
		in_block && /^```$/ { in_block = 0; next }
		in_section && in_block { print }
	' "$repo/README.md"
}

cd "$repo"
mkdir -p "$work/bin" "$work/home" "$work/api"
anvil_bin=${ANVIL:-}
if [ -z "$anvil_bin" ]; then
	go build -o "$work/bin/anvil" ./cmd/anvil
else
	cp "$anvil_bin" "$work/bin/anvil"
fi
go build -o "$work/petstore-mock" ./examples/petstore/mockupstream
cp examples/petstore/openapi.yaml "$work/api/openapi.yaml"

readme_blocks >"$work/readme.sh"
grep -q '^anvil init openapi.yaml' "$work/readme.sh" || die "README's section has no anvil init block"
[ "$(grep -c '^anvil ' "$work/readme.sh")" -ge 5 ] || die "README's blocks hold fewer than five anvil commands"

step "the mock upstream standing in for the API"
key=own-api-$RANDOM$RANDOM
"$work/petstore-mock" --key "$key" >"$work/mock.url" 2>"$work/mock.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/mock.url" ] && break; sleep 0.05; done
upstream=$(head -n 1 "$work/mock.url")
[ -n "$upstream" ] || die "the mock upstream did not start"

port=8931
if ! python3 -c 'import socket,sys; s=socket.socket(); s.bind(("127.0.0.1", 8931))' 2>/dev/null; then
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	printf '   port 8931 is taken: the blocks run with %s in its place\n' "$port"
	sed -i "s/8931/$port/g" "$work/readme.sh"
fi

step "README's blocks, verbatim"
sed 's/^/   | /' "$work/readme.sh"
(
	cd "$work/api"
	export HOME=$work/home PATH=$work/bin:$PATH
	export PETSTORE_KEY=$key ANVIL_UPSTREAM_PETSTORE_URL=$upstream ANVIL_ALLOWED_HOSTS=127.0.0.1
	unset ANVIL_VAULT_KEY_FILE ANVIL_VAULT_DIR ANVIL_GATEWAY_TOKEN_FILE ANVIL_INBOUND_AUTH_MODE ANVIL_STORE ANVIL_STATE_FILE
	# shellcheck disable=SC1091
	. "$work/readme.sh" >"$work/readme.out" 2>"$work/readme.err"
	# The gateway (anvil serve … &) keeps running for the checks below.
	printf '%s\n' "$!" >"$work/gateway.pid"
	kill -0 "$!"
) || die "README's blocks failed: $(tail -n 20 "$work/readme.err")"
gpid=$(cat "$work/gateway.pid")
pids+=("$gpid")
cat "$work/readme.out"

step "   what the blocks did"
api=$work/api
head -n 1 "$api/anvil.yaml" | grep -q '^# yaml-language-server: \$schema=' || die "no editor schema line"
grep -q '^#   api_key: an API key in header X-API-Key; needed by listPets, getPetById, getInventory$' "$api/anvil.yaml" || die "the manifest does not describe the auth per scheme"
grep -q '^  write  petstore.pets.create (addPet; POST /pets; needs confirmation)$' "$work/readme.out" || die "approve did not list the write it approved"
grep -q '^Connected petstore (account default)\.$' "$work/readme.out" || die "anvil connect did not store the key"
devkey=$work/home/.anvil/gateway/vault.key
[ "$(stat -c %a "$devkey" 2>/dev/null)" = 600 ] || die "no development vault key of mode 0600 at $devkey"
grep -q "vault: development key $devkey (created now, mode 0600" "$work/readme.err" || die "the startup report does not name the development key"
grep -q '"name":"Rex"' "$work/readme.out" || die "the read did not list Rex"
grep -q '"name":"Nibbles"' "$work/readme.out" || die "the confirmed write did not create Nibbles"

step "   the starting manifest validates against the JSON Schema (Python jsonschema)"
"$work/bin/anvil" schema manifest >"$work/anvil.manifest.schema.json"
cmp -s "$work/anvil.manifest.schema.json" "$repo/schemas/anvil.manifest.schema.json" || die "anvil schema manifest differs from schemas/"
python3 - "$work/anvil.manifest.schema.json" "$api/anvil.yaml" <<'PY' || die "schema validation failed"
import json, sys
import jsonschema, yaml
schema = json.load(open(sys.argv[1]))
doc = yaml.safe_load(open(sys.argv[2]))
jsonschema.Draft202012Validator.check_schema(schema)
errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=str)
for e in errors:
    print("  %s: %s" % ("/".join(map(str, e.absolute_path)), e.message), file=sys.stderr)
bad = dict(doc, operations=dict(doc["operations"], addPet={"stat": "approved"}))
if not errors and jsonschema.Draft202012Validator(schema).is_valid(bad):
    print("  the schema accepts an unknown key", file=sys.stderr)
    sys.exit(1)
print("   valid: %d operations" % len(doc["operations"]))
sys.exit(1 if errors else 0)
PY
"$work/bin/anvil" compile "$api/openapi.yaml" --manifest "$api/anvil.yaml" --out "$work/check/petstore" --root "$work" --format json >"$work/compile.json" || die "compile failed: $(cat "$work/compile.json")"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r["errors"]==0 and r["warnings"]==0 else 1)' "$work/compile.json" || die "compile reported diagnostics: $(cat "$work/compile.json")"

step "   one read and one confirmed write through the Python SDK, no token file"
ANVIL_GATEWAY_URL=http://127.0.0.1:$port/mcp PYTHONPATH=$api/home/petstore/python HOME=$work/home \
	PYTHONDONTWRITEBYTECODE=1 python3 - <<'PY' || die "the SDK calls failed"
import os
from anvil_petstore import PetstoreClient
assert "ANVIL_GATEWAY_TOKEN_FILE" not in os.environ
c = PetstoreClient()
pets = c.list_pets(status="sold")
assert [p["name"] for p in pets] == ["Tom"], pets
try:
    c.add_pet(name="Whiskers", tag="cat")
    raise SystemExit("an unconfirmed write was sent")
except SystemExit:
    raise
except Exception as e:
    assert getattr(e, "code", "") == "confirmation_required", e
made = c.add_pet(name="Whiskers", tag="cat", confirm=True)
assert made["name"] == "Whiskers" and made["id"] == 4, made
print("   read %d pet(s); created pet %d" % (len(pets), made["id"]))
PY
posts=$(grep -c '"method":"POST","path":"/v1/pets".*"status":201' "$work/mock.log" || true)
[ "$posts" = 2 ] || die "the upstream saw $posts created pet(s), want 2"
unauth=$(grep -c '"status":401' "$work/mock.log" || true)
[ "$unauth" = 0 ] || die "the upstream refused $unauth request(s) for a missing key"
echo "own-api: ok"
