#!/usr/bin/env bash
# Owns the proof that openapi/openapi.yaml is read exactly by the client generators partners use:
# openapi-typescript (with openapi-fetch), @hey-api/openapi-ts (fetch client) and orval (fetch client),
# the versions package-lock.json pins, each generate a client into a temporary directory, and the
# programs in examples/generators/ are compiled against them with tsc --strict
# --noUncheckedIndexedAccess (no casts in them). They create a customer, an invoice without
# exclude_from_autopay, upload its PDF as a base64 string, narrow a WebhookDelivery on its topic, build
# a delivery history record from a delivery's data, and expect `42` and `{}` to be refused as an upload
# body (@ts-expect-error: an upload body typed `unknown` fails the check). A document change that
# breaks a generator fails CI. Offline: only what `npm ci` installed.
#
# Environment:
#   DOCUMENT=FILE   check another document (default openapi/openapi.yaml)
set -euo pipefail

ROOT_DIR="$(cd "$(dirname "$0")/.." && pwd)"
DOCUMENT="$(readlink -f "${DOCUMENT:-$ROOT_DIR/openapi/openapi.yaml}")"
BIN="$ROOT_DIR/node_modules/.bin"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/billing-sandbox-generators.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
log() { printf '[generators] %s\n' "$*"; }
fail() { log "FAIL: $*"; exit 1; }
START=$SECONDS

# The generators run in the temporary directory, as in a partner's project: openapi-typescript then
# lints with its own defaults, not this repository's redocly.yaml.
cd "$WORK"
"$BIN/openapi-typescript" "$DOCUMENT" -o openapi-typescript/api.ts >gen.log 2>&1 || { cat gen.log; fail "openapi-typescript"; }
# @hey-api/openapi-ts reads a relative path without ./ as a registry shorthand: the path is absolute.
"$BIN/openapi-ts" -i "$DOCUMENT" -o hey-api -c @hey-api/client-fetch --no-log-file -s >gen.log 2>&1 || { cat gen.log; fail "@hey-api/openapi-ts"; }
"$BIN/orval" -i "$DOCUMENT" -o orval/api.ts --client fetch --quiet >gen.log 2>&1 || { cat gen.log; fail "orval"; }
log "generated: openapi-typescript $("$BIN/openapi-typescript" --version | tr -d v), @hey-api/openapi-ts $("$BIN/openapi-ts" --version), orval $("$BIN/orval" --version) ($((SECONDS - START)) s)"

cp "$ROOT_DIR"/examples/generators/*.ts .
echo '{ "type": "module" }' >package.json
# openapi-fetch, @types/node and typescript from the repository's install.
ln -s "$ROOT_DIR/node_modules" node_modules
# One tsc for the three programs (and the generated code they import, checked as strictly): a partner's
# settings, module nodenext and the DOM's fetch types.
"$BIN/tsc" --strict --noUncheckedIndexedAccess --noEmit --module nodenext --target es2022 --lib es2022,dom,dom.iterable --types node \
  openapi-typescript.ts hey-api.ts orval.ts || fail "a generated client does not compile strictly with examples/generators/"
log "OK: the three programs compile strictly against the generated clients ($((SECONDS - START)) s)"
