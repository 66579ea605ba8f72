#!/usr/bin/env bash
# Owns the proof that partners' test runners can use the package: the packed tarball installed, as a
# partner installs it (no overrides of ours apply), beside Jest, Vitest and TypeScript in a temporary
# directory; then the projects in test/consumers/ run there: Jest on CommonJS (globalSetup requires the
# package; a test file requires it inside Jest's module loader), Jest on ES modules, Vitest, and a
# TypeScript check of `require` (.cts) and `import` (.mts) under module node16.
#
# Environment:
#   PACK_TARBALL=FILE   test this tarball instead of packing one (.ci/run packs once for both smokes)
#   SMOKE_SOURCE=head   pack the last commit instead of the working tree (as pack-smoke.sh)
set -euo pipefail

ROOT_DIR="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/billing-sandbox-consumers.XXXXXX")"
log() { printf '[consumers] %s\n' "$*"; }
# shellcheck source=smoke-lib.sh
source "$ROOT_DIR/scripts/smoke-lib.sh"
fail() { log "FAIL: $*"; exit 1; }
trap 'rm -rf "$WORK"' EXIT

if [[ -n "${PACK_TARBALL:-}" ]]; then
  TARBALL="$(readlink -f "$PACK_TARBALL")"
else
  SOURCE="$(source_tree "$WORK/source" "packing")"
  if [[ "$SOURCE" != "$ROOT_DIR" ]]; then (cd "$SOURCE" && npm ci --no-audit --no-fund --loglevel=error >/dev/null); fi
  log "npm pack (prepack builds dist/)"
  (cd "$SOURCE" && npm pack --pack-destination "$WORK" --loglevel=error >"$WORK/pack.log" 2>&1) || { cat "$WORK/pack.log"; fail "npm pack failed"; }
  TARBALL="$(ls "$WORK"/billing-sandbox-*.tgz)"
fi
log "tarball: $(basename "$TARBALL")"

APP="$WORK/app"
mkdir -p "$APP"
cp -r "$ROOT_DIR/test/consumers/." "$APP/"
cd "$APP"
# One install for the four projects (Node finds node_modules in the parent directory). vitest 3 with
# vite 7: the newest vite may need a newer Node than the engines floor.
cat >package.json <<EOF
{
  "name": "billing-sandbox-consumers",
  "private": true,
  "devDependencies": {
    "billing-sandbox": "file:$TARBALL",
    "jest": "^29.7.0",
    "vitest": "^3.2.4",
    "vite": "^7.1.0",
    "typescript": "~5.9.0",
    "@types/node": "^22.19.0"
  }
}
EOF
log "installing the tarball with jest, vitest and typescript"
started=$SECONDS
npm install --prefer-offline --no-audit --no-fund --loglevel=error >"$WORK/install.log" 2>&1 || { cat "$WORK/install.log"; fail "npm install"; }
log "installed in $((SECONDS - started))s"
# What a partner's install holds: the version of json-schema-ref-parser that is ESM-only (our overrides do not apply).
log "a partner's install has @apidevtools/json-schema-ref-parser $(node -p 'require("./node_modules/@apidevtools/json-schema-ref-parser/package.json").version' 2>/dev/null || echo '(none)')"

BIN="$APP/node_modules/.bin"
run() { # run NAME DIR COMMAND...
  local name="$1" dir="$2"
  shift 2
  log "$name"
  (cd "$APP/$dir" && "$@") >"$WORK/$dir.log" 2>&1 || { cat "$WORK/$dir.log"; fail "$name"; }
  grep -E 'Tests: |Tests +[0-9]' "$WORK/$dir.log" | sed 's/^/    /' || true
}
run "Jest, CommonJS: globalSetup require()s the package, a test file requires it in Jest's loader" jest-cjs "$BIN/jest" --ci
run "Jest, ES modules (--experimental-vm-modules)" jest-esm env NODE_OPTIONS=--experimental-vm-modules "$BIN/jest" --ci
run "Vitest" vitest "$BIN/vitest" run
run "TypeScript (module node16): require() in a .cts file and import in a .mts file" types "$BIN/tsc" -p tsconfig.json
log "PASS: Jest (CommonJS and ES modules), Vitest and TypeScript use the packed tarball"
