#!/usr/bin/env bash
# The parity suite as a partner's CI job runs it: against the real demo environment with a demo
# key (here defaulting to a local sandbox), writing a JSON report and JUnit XML beside the text
# table. Exit code 0 only when no case failed (skipped cases do not fail the run).
# With the package installed (npm i -D billing-sandbox) the command is on PATH in npm scripts,
# or run it as `npx billing-sandbox parity ...`.
set -euo pipefail
billing-sandbox parity \
  --base-url "${PARITY_BASE_URL:-http://127.0.0.1:4010}" \
  --client-id "${PARITY_CLIENT_ID:-sandbox_client_id}" \
  --client-secret "${PARITY_CLIENT_SECRET:-sandbox_client_secret}" \
  --report parity-report.json \
  --junit parity-junit.xml
