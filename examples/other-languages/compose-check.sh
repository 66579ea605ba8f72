#!/usr/bin/env bash
# Docker Compose, from a shell on this machine: start the sandbox and wait for its health check, run
# the CI steps (a partner, a token, one call, a webhook to a receiver here, the events), stop it.
set -euo pipefail
cd "$(dirname "$0")"
docker compose up -d --wait billing-sandbox      # the wait: until the HEALTHCHECK passes
trap 'docker compose down' EXIT
bash ci-check.sh http://127.0.0.1:4010 host.docker.internal
