#!/usr/bin/env bash
# The steps a CI job runs against the sandbox's container (the GitHub Actions and GitLab CI recipes
# call it): the wait, a partner of its own (the credentials), a token, one call, a webhook to a
# receiver in the job bound to 0.0.0.0, and the same event asserted through GET /_sandbox/events.
# Needs bash, curl and python3.
#   bash ci-check.sh BASE_URL RECEIVER_HOST
#   BASE_URL        where the job reaches the sandbox, e.g. http://127.0.0.1:4010
#   RECEIVER_HOST   where the sandbox reaches the job, e.g. host.docker.internal
set -euo pipefail
BASE_URL="${1:?usage: ci-check.sh BASE_URL RECEIVER_HOST}"
RECEIVER_HOST="${2:?usage: ci-check.sh BASE_URL RECEIVER_HOST}"
WORK="$(mktemp -d)"
trap 'kill "$(cat "$WORK/receiver.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$WORK"' EXIT
json() { python3 -c "import json, sys; print(json.load(sys.stdin)$1)"; }

# The wait: the container's port may be open before the sandbox serves; health answers 200 once it does.
for _ in $(seq 120); do curl -fsS "$BASE_URL/_sandbox/health" >/dev/null 2>&1 && break; sleep 0.5; done
curl -fsS "$BASE_URL/_sandbox/health" >/dev/null

# A partner of our own (fresh, empty accounts), its production key, and a token for it.
partner="$(curl -fsS -X POST "$BASE_URL/_sandbox/partners" -H 'Content-Type: application/json' -d '{"name":"ci"}')"
client_id="$(json '["credentials"]["production"]["client_id"]' <<<"$partner")"
client_secret="$(json '["credentials"]["production"]["client_secret"]' <<<"$partner")"
token="$(curl -fsS -u "$client_id:$client_secret" -d grant_type=client_credentials "$BASE_URL/oauth/token" | json '["access_token"]')"
api() { curl -fsS -X "$1" "$BASE_URL$2" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' ${3:+-d "$3"}; }

# One call.
customer_id="$(api POST /customers '{"name":"Acme Corp","email":"ap@acme.test"}' | json '["id"]')"
echo "created $customer_id"

# A receiver in the job, on 0.0.0.0 (the sandbox's container reaches it at RECEIVER_HOST).
python3 - "$WORK" <<'PY' &
import http.server, sys
work = sys.argv[1]
class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        with open(f"{work}/deliveries", "ab") as out:
            out.write(self.rfile.read(int(self.headers["Content-Length"])) + b"\n")
        self.send_response(200)
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("0.0.0.0", 0), Receiver)
with open(f"{work}/port.tmp", "w") as out:
    out.write(str(server.server_address[1]))
__import__("os").rename(f"{work}/port.tmp", f"{work}/port")
server.serve_forever()
PY
echo $! >"$WORK/receiver.pid"
for _ in $(seq 50); do [[ -f "$WORK/port" ]] && break; sleep 0.1; done
api POST /webhooks "{\"endpoint_url\":\"http://$RECEIVER_HOST:$(cat "$WORK/port")/hooks\",\"topic\":\"customer_created\"}" >/dev/null
hooked_id="$(api POST /customers '{"name":"Globex"}' | json '["id"]')"
for _ in $(seq 100); do grep -qs "\"entity_id\":\"$hooked_id\"" "$WORK/deliveries" && break; sleep 0.1; done
grep -qs "\"entity_id\":\"$hooked_id\"" "$WORK/deliveries" || { echo "no customer_created delivery for $hooked_id at the receiver" >&2; exit 1; }
echo "delivered customer_created for $hooked_id to http://$RECEIVER_HOST:$(cat "$WORK/port")/hooks"

# Without a receiver: the account's events, through the control plane (the token names the account).
events="$(api GET "/_sandbox/events?topic=customer_created&entity_id=$customer_id" | json '["data"][0]["entity_id"]')"
[[ "$events" == "$customer_id" ]] || { echo "GET /_sandbox/events did not list customer_created for $customer_id" >&2; exit 1; }
echo "GET /_sandbox/events lists customer_created for $customer_id"
