#!/usr/bin/env bash
# Owns the proof of the npm package: `npm pack` (the prepack build runs) gives a tarball that holds what
# the package needs and nothing of the sources or tests; `npx billing-sandbox` from that tarball, in an
# empty temporary directory with production dependencies only, prints its version, starts on a free
# port, answers a token and an API call, and exits 0 on SIGTERM. (The library entry, from test runners
# and TypeScript, is scripts/consumers.sh's.)
#
# Environment:
#   SMOKE_SOURCE=head   pack the last commit (git archive, then npm ci there) instead of the working tree
#   PACK_TARBALL=FILE   test this tarball instead of packing one
set -euo pipefail

ROOT_DIR="$(cd "$(dirname "$0")/.." && pwd)"
SCRIPTS_DIR="$ROOT_DIR/scripts"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/billing-sandbox-pack.XXXXXX")"
SANDBOX_PID=""

log() { printf '[pack-smoke] %s\n' "$*"; }
# shellcheck source=smoke-lib.sh
source "$SCRIPTS_DIR/smoke-lib.sh"
fail() { log "FAIL: $*"; [[ -f "$WORK/out.log" ]] && tail -n 30 "$WORK/out.log"; exit 1; }
cleanup() {
  local status=$?
  if [[ -n "$SANDBOX_PID" ]]; then kill -KILL -- "-$SANDBOX_PID" 2>/dev/null || kill -KILL "$SANDBOX_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
  exit "$status"
}
trap cleanup EXIT

# --- the tarball ----------------------------------------------------------------------------------
if [[ -n "${PACK_TARBALL:-}" ]]; then
  TARBALL="$(readlink -f "$PACK_TARBALL")"
else
  SOURCE="$(source_tree "$WORK/source" "packing")"
  if [[ "$SOURCE" != "$ROOT_DIR" ]]; then (cd "$SOURCE" && npm ci --no-audit --no-fund --loglevel=error >/dev/null); fi
  [[ -d "$SOURCE/node_modules" ]] || fail "run npm ci first: the prepack build needs the dev dependencies"
  log "npm pack (prepack builds dist/)"
  (cd "$SOURCE" && npm pack --pack-destination "$WORK" --loglevel=error >"$WORK/pack.log" 2>&1) || { cat "$WORK/pack.log"; fail "npm pack failed"; }
  TARBALL="$(ls "$WORK"/billing-sandbox-*.tgz)"
fi
log "tarball: $(basename "$TARBALL") ($(($(stat -c %s "$TARBALL") / 1024)) kB)"

# --- what it holds --------------------------------------------------------------------------------
tar -tzf "$TARBALL" | sed 's#^package/##' | sort >"$WORK/files.txt"
for wanted in package.json README.md LICENSE dist/cli.js dist/index.js dist/index.d.ts dist/http/openapi.js \
    dist/cli/bundle.cjs dist/openapi/openapi.json dist/openapi/control-plane.json dist/openapi/openapi.requests.json dist/openapi/control-plane.requests.json \
    dist/cjs/index.cjs dist/cjs/index.mjs dist/cjs/client.cjs dist/cjs/client.mjs dist/cjs/testcontainers.cjs dist/cjs/testcontainers.mjs dist/cjs/package.json dist/cjs/types/index.d.ts dist/cjs/THIRD_PARTY_LICENSES.txt openapi/openapi.yaml openapi/control-plane.yaml \
    src/scenarios/scenario.schema.json src/fixtures/fixture.schema.json fixtures/demo.json scenarios/slow-api.json; do
  grep -qx "$wanted" "$WORK/files.txt" || fail "the tarball lacks $wanted"
done
if grep -E '^(src/.*\.ts|test/|examples/|scripts/|\.ci/|node_modules/)|\.map$|\.tgz$' "$WORK/files.txt" >"$WORK/unwanted.txt"; then
  head "$WORK/unwanted.txt"
  fail "the tarball ships sources, tests or build leftovers (above)"
fi
tar -xzf "$TARBALL" -C "$WORK" package/package.json
node -e '
  const pkg = require(process.argv[1]);
  if (pkg.bin?.["billing-sandbox"] !== "dist/cli.js") throw new Error("bin billing-sandbox is not dist/cli.js");
' "$WORK/package/package.json" || fail "package.json bin"
log "contents ok ($(wc -l <"$WORK/files.txt") files)"

# --- npx in an empty directory ---------------------------------------------------------------------
EMPTY="$WORK/empty"
mkdir -p "$EMPTY"
cd "$EMPTY"
# Only the production dependencies are installed by npx, so a runtime need of a dev dependency fails here.
# A cache of its own: nothing from this machine's earlier installs, and nothing left behind.
export npm_config_yes=true npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
export npm_config_cache="$WORK/npm-cache"
# The CLI's code cache (src/cli/code-cache.ts) in a folder of this run's: checked after the first serve.
export NODE_COMPILE_CACHE="$WORK/compile-cache"
CODE_CACHE="$NODE_COMPILE_CACHE/billing-sandbox"
version="$(npx --package "$TARBALL" billing-sandbox --version 2>"$WORK/npx-version.log")" || { cat "$WORK/npx-version.log"; fail "npx billing-sandbox --version"; }
expected="$(node -p 'require(process.argv[1]).version' "$WORK/package/package.json")"
[[ "$version" == "$expected" ]] || fail "--version printed '$version', want '$expected'"
log "npx billing-sandbox --version: $version"

# One API round trip: health, a token with the default credentials, a customer made and listed.
api_check() { # api_check BASE_URL EXTERNAL_ID [MIN_CUSTOMERS]
  node "$SCRIPTS_DIR/smoke-api.mjs" "$1" "$2" "${3:-1}" pack-smoke
}

wait_for_url() { # wait_for_url PID LOG: the URL of the startup line
  local found=""
  for _ in $(seq 1 120); do
    found="$(sed -n 's/.* listening on \(http:[^ ]*\).*/\1/p;T;q' "$2")"
    [[ -n "$found" ]] && { printf '%s' "$found"; return 0; }
    kill -0 "$1" 2>/dev/null || return 1
    sleep 0.5
  done
  return 1
}

# As a user starts it: npx in its own process group, stopped as a terminal or CI runner stops a job,
# with SIGTERM to the group (npm itself then exits 143 at once; the sandbox must still stop cleanly).
setsid npx --package "$TARBALL" billing-sandbox --port 0 --seed 42 --log-level info >"$WORK/out.log" 2>&1 &
SANDBOX_PID=$!
url="$(wait_for_url "$SANDBOX_PID" "$WORK/out.log")" || fail "npx billing-sandbox did not print its startup line"
log "npx billing-sandbox --port 0 listening on $url"
[[ -z "$(ls -A "$EMPTY")" ]] || fail "running it wrote into the working directory: $(ls -A "$EMPTY")"
api_check "$url" pack-smoke-npx || fail "the API did not answer as expected"
kill -TERM -- "-$SANDBOX_PID"
wait "$SANDBOX_PID" 2>/dev/null || true
for _ in $(seq 1 40); do [[ -z "$(ps -o pid= -g "$SANDBOX_PID" 2>/dev/null)" ]] && break; sleep 0.25; done
[[ -z "$(ps -o pid= -g "$SANDBOX_PID" 2>/dev/null)" ]] || fail "processes of the npx run outlived SIGTERM"
SANDBOX_PID=""
grep -q 'shutting down' "$WORK/out.log" || fail "the sandbox did not log its shutdown after SIGTERM"
# It ran well past 500 ms after listening: the code cache was taken once it settled, in a folder of its user's only.
cache_files() { ls "$CODE_CACHE"/*.bin 2>/dev/null; }
[[ "$(cache_files | wc -l)" == 1 ]] || fail "no code cache in $CODE_CACHE after the server settled: $(ls -la "$CODE_CACHE" 2>&1)"
[[ "$(stat -c %a "$CODE_CACHE")" == 700 ]] || fail "the code cache folder is $(stat -c %a "$CODE_CACHE"), not 700"
cache_written="$(stat -c %y "$(cache_files)")"

# The installed bin itself (what npx ran), as a direct child: exit code 0 on SIGTERM and a flushed --data file.
BIN="$(ls "$npm_config_cache"/_npx/*/node_modules/.bin/billing-sandbox | head -n 1)"
[[ -x "$BIN" ]] || fail "npx did not install the billing-sandbox bin"
mkdir -p "$WORK/state"
"$BIN" --port 0 --fixtures demo --data "$WORK/state/sandbox.json" >"$WORK/out.log" 2>&1 &
SANDBOX_PID=$!
url="$(wait_for_url "$SANDBOX_PID" "$WORK/out.log")" || fail "the installed bin did not print its startup line"
api_check "$url" pack-smoke-bin 9 || fail "the API did not answer as expected"
kill -TERM "$SANDBOX_PID"
code=0
wait "$SANDBOX_PID" || code=$?
SANDBOX_PID=""
[[ "$code" == 0 ]] || fail "exit code $code after SIGTERM (want 0)"
# The data file is a snapshot and its log segments (FILE, FILE.log.N): the write is in one of them.
grep -qs pack-smoke-bin "$WORK/state/sandbox.json" "$WORK/state"/sandbox.json.log.* || fail "the --data file was not flushed on SIGTERM"
# The same installed bundle: that start used the cache (a refused or missing one is written again).
[[ "$(cache_files | wc -l)" == 1 && "$(stat -c %y "$(cache_files)")" == "$cache_written" ]] \
  || fail "the second start did not use the code cache the first one wrote: $(ls -la --time-style=full-iso "$CODE_CACHE")"

# The programmatic API from test runners (Jest CommonJS and ES modules, Vitest) and its types under
# TypeScript's module node16 (require and import, library checks on) are proved by scripts/consumers.sh.

log "PASS: the packed tarball runs with npx from an empty directory; SIGTERM stops it with exit code 0 and a flushed data file"
