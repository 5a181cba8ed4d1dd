#!/usr/bin/env bash
# Your own API in five commands, end to end, as README's "Your own API in
# five commands" tells it: starting from examples/petstore/openapi.yaml (a
# description Anvil has no manifest for), it runs `anvil init`, edits
# nothing, compiles with no error, approves with a glob, packages the
# harness, serves the bundle on loopback against a mock upstream, and makes
# one read and one confirmed write through the harness's Python SDK. The
# starting manifest is checked against schemas/anvil.manifest.schema.json by
# Python's jsonschema, a validator that is not Anvil's.
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

cd "$repo"
anvil=${ANVIL:-}
if [ -z "$anvil" ]; then
	go build -o "$work/anvil" ./cmd/anvil
	anvil=$work/anvil
fi
go build -o "$work/petstore-mock" ./examples/petstore/mockupstream
spec=$repo/examples/petstore/openapi.yaml
ws=$work/workspace
key=own-api-$RANDOM$RANDOM

step "1. anvil init"
"$anvil" init "$spec" --service petstore --out "$work/anvil.yaml"
head -n 1 "$work/anvil.yaml" | grep -q '^# yaml-language-server: \$schema=' || die "no editor schema line"

step "   the starting manifest validates against the JSON Schema (Python jsonschema)"
"$anvil" schema manifest >"$work/anvil.manifest.schema.json" # where the first line points
cmp -s "$work/anvil.manifest.schema.json" "$repo/schemas/anvil.manifest.schema.json" || die "anvil schema manifest differs from schemas/"
python3 - "$work/anvil.manifest.schema.json" "$work/anvil.yaml" <<'PY' || die "schema validation failed"
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

step "2. anvil compile (no edits)"
"$anvil" compile "$spec" --manifest "$work/anvil.yaml" --out "$ws/petstore" --root "$work" --format json >"$work/compile.json" || die "compile failed: $(cat "$work/compile.json")"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r["errors"]==0 and r["warnings"]==0 else 1)' "$work/compile.json" || die "compile reported diagnostics: $(cat "$work/compile.json")"

step "3. anvil approve with a glob"
"$anvil" approve "$ws/petstore" 'pets.*'

step "4. anvil package harness"
"$anvil" package harness "$ws/petstore" --out "$work/home/petstore" --workspace "$ws"

step "5. anvil serve mcp (loopback, mock upstream)"
"$work/petstore-mock" --key "$key" >"$work/mock.url" 2>"$work/mock.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/mock.url" ] && break; sleep 0.05; done
upstream=$(head -n 1 "$work/mock.url")
[ -n "$upstream" ] || die "the mock upstream did not start"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/vault.key"
chmod 600 "$work/vault.key"
printf 'local-turn-token\n' >"$work/turn.token"
healthy=
for attempt in 1 2 3; do # a free port can be taken between choosing and binding it
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	ANVIL_VAULT_KEY_FILE=$work/vault.key ANVIL_VAULT_DIR=$work/vault ANVIL_ALLOWED_HOSTS=127.0.0.1 \
		ANVIL_UPSTREAM_PETSTORE_URL=$upstream ANVIL_AUDIT_FILE=$work/audit.jsonl \
		"$anvil" serve mcp "$ws" --fleet --http "$port" --host 127.0.0.1 >"$work/gateway.log" 2>&1 &
	gpid=$!
	pids+=($gpid)
	gateway=http://127.0.0.1:$port
	for _ in $(seq 200); do
		if curl -fsS "$gateway/healthz" >/dev/null 2>&1; then healthy=1; break; fi
		kill -0 "$gpid" 2>/dev/null || break
		sleep 0.05
	done
	[ -n "$healthy" ] && break
done
[ -n "$healthy" ] || die "the gateway is not healthy"
printf '%s\n' "$key" | "$anvil" connect "$ws" petstore --gateway "$gateway/mcp" --token-file "$work/turn.token" --api-key-stdin

step "   one read and one confirmed write through the Python SDK"
ANVIL_GATEWAY_URL=$gateway/mcp ANVIL_GATEWAY_TOKEN_FILE=$work/turn.token PYTHONPATH=$work/home/petstore/python \
	PYTHONDONTWRITEBYTECODE=1 python3 - <<'PY' || die "the SDK calls failed"
import json
from anvil_petstore import PetstoreClient
c = PetstoreClient()
pets = c.list_pets(status="available")
assert [p["name"] for p in pets] == ["Rex"], pets
try:
    c.add_pet(name="Nibbles", tag="hamster")
    raise SystemExit("an unconfirmed write was sent")
except SystemExit:
    raise
except Exception as e:
    assert getattr(e, "code", "") == "confirmation_required", e
made = c.add_pet(name="Nibbles", tag="hamster", confirm=True)
assert made["name"] == "Nibbles" and made["id"] == 3, made
print("   read %d pet(s); created pet %d" % (len(pets), made["id"]))
PY
posts=$(grep -c '"method":"POST","path":"/v1/pets".*"status":201' "$work/mock.log" || true)
[ "$posts" = 1 ] || die "the upstream saw $posts created pet(s), want 1"
unauth=$(grep -c '"status":401' "$work/mock.log" || true)
[ "$unauth" = 0 ] || die "the upstream refused $unauth request(s) for a missing key"
echo "own-api: ok"
