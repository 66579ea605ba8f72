#!/usr/bin/env bash
# A tour of the command line against a running sandbox: the commands of the transcript in
# docs/command-line.md, in its order. Start a sandbox first (`npx billing-sandbox --port 4010`);
# SANDBOX_URL points elsewhere. test/cli-commands.test.ts runs this script against a fresh sandbox.
set -euo pipefail
billing-sandbox() { ${BILLING_SANDBOX:-npx billing-sandbox} "$@"; }

billing-sandbox clock
billing-sandbox clock advance 31d
billing-sandbox trigger invoice_paid
billing-sandbox scenario load slow-api
billing-sandbox scenario list
billing-sandbox requests --limit 3
billing-sandbox scenario clear
billing-sandbox reset
