#!/usr/bin/env bash
# Owns running the examples in examples/ as CI does: build the package (examples depend on it through
# "file:.."); run the shell examples the README and docs quote against the CLI (scripts/shell-examples.mjs);
# check the docs still quote every example exactly (npm run docs:examples); then install the examples'
# own dependencies from their lock file, type-check, and run the Jest globalSetup/globalTeardown
# example and the Vitest files (the docs' programmatic and webhook-receiver examples among them) and the
# typed-client example.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[examples] %s\n' "$*"; }

[[ -d node_modules ]] || { log "FAIL: run npm ci at the repository root first"; exit 1; }
# SKIP_BUILD=1: dist/ was just built from this tree (.ci/run packs first, and npm pack builds).
if [[ -z "${SKIP_BUILD:-}" ]]; then
  log "building the package (dist/)"
  npm run build --silent >/dev/null
fi
log "the docs quote every example exactly"
npm run --silent docs:examples
log "the shell examples against the CLI"
node scripts/shell-examples.mjs
cd examples
log "installing the examples' dependencies"
# Not `npm ci`: vite's rollup and esbuild list platform binaries for every OS as optional
# dependencies, and those the registry this project installs from lacks are missing from the lock
# file, which `npm ci` refuses as out of sync. `npm install` keeps the locked versions of the rest
# and, with --no-save, leaves the lock file as committed.
npm install --no-save --no-audit --no-fund --loglevel=error
log "type-check, Jest, Vitest and the typed client"
# A top-level await that never settles would hang Vitest's collection: bound the whole run.
timeout 900 npm test
log "PASS"
