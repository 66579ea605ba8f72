curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -d '{"topic":"invoice_paid","duplicate":2}' \
  http://127.0.0.1:4010/_sandbox/events
