#!/usr/bin/env bash
# Owns running the partner examples in examples/ as CI does: build the package (examples depend on it
# through "file:.."), install the examples' own dependencies from their lock file, then type-check and
# run the Jest globalSetup/globalTeardown example, the Vitest example and the typed-client example.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[examples] %s\n' "$*"; }

[[ -d node_modules ]] || { log "FAIL: run npm ci at the repository root first"; exit 1; }
log "building the package (dist/)"
npm run build --silent >/dev/null
cd examples
log "installing the examples' dependencies"
# Not `npm ci`: vite's rollup and esbuild list platform binaries for every OS as optional
# dependencies, and those the registry this project installs from lacks are missing from the lock
# file, which `npm ci` refuses as out of sync. `npm install` keeps the locked versions of the rest
# and, with --no-save, leaves the lock file as committed.
npm install --no-save --no-audit --no-fund --loglevel=error
log "type-check, Jest, Vitest and the typed client"
npm test
log "PASS"
