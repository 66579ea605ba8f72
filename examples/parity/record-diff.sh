#!/usr/bin/env bash
# The loop of docs/parity.md: record what the real demo environment answers, then diff the sandbox
# against it. DEMO_URL and DEMO_CLIENT_ID / DEMO_CLIENT_SECRET: the demo environment and your demo
# key (CI runs this file with a second sandbox in their place: scripts/record-diff-example.sh);
# SANDBOX_URL: the sandbox. The exit code is diff's: 1 when something differs.
set -euo pipefail
key="${DEMO_CLIENT_ID:-sandbox_client_id}:${DEMO_CLIENT_SECRET:-sandbox_client_secret}"

# 1. Record: a proxy that forwards every request to the demo environment and writes session.har.
billing-sandbox record --target "${DEMO_URL:-http://127.0.0.1:4011}" \
  --port "${RECORD_PORT:-4020}" --out session.har --overwrite >record.log &
recorder=$!
until grep -q 'listening on' record.log; do sleep 0.2; done
proxy="$(grep -o 'listening on [^ ]*' record.log | cut -d' ' -f3)"

# 2. Your client or its tests, pointed at the proxy instead of the demo environment (here: curl).
token="$(curl -s -u "$key" -d grant_type=client_credentials "$proxy/oauth/token" \
  | sed 's/.*"access_token":"\([^"]*\)".*/\1/')"
api() { curl -s -o /dev/null -H "Authorization: Bearer $token" -H 'Content-Type: application/json' "$@"; }
customer="$(curl -s -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  -d '{"name":"Acme Payroll","email":"ap@acme.example"}' "$proxy/customers" \
  | sed 's/.*"id":"\(cus_[a-z0-9]*\)".*/\1/')"
api "$proxy/customers/$customer"
api -d "{\"customer_id\":\"$customer\",\"line_items\":[{\"description\":\"Payroll\",\"amount\":120.5}]}" "$proxy/invoices"
api "$proxy/invoices?limit=10"
api -d '{"name":"Paper & Co","email":"billing@paper.example"}' "$proxy/vendors"
api -X DELETE "$proxy/customers/$customer"
api -X DELETE "$proxy/customers/$customer"
kill -TERM "$recorder" && wait "$recorder" # Ctrl-C, in a terminal: the file is finished

# 3. Diff: replay session.har against the sandbox, on a fresh partner, and report what differs.
billing-sandbox diff session.har --base-url "${SANDBOX_URL:-http://127.0.0.1:4010}" --junit diff-junit.xml
