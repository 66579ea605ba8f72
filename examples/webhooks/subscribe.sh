curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -d '{"endpoint_url":"https://hooks.example.com/billing","topic":"invoice_paid","secret_key":"whsec_123"}' \
  http://127.0.0.1:4010/webhooks
