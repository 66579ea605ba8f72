TOKEN=$(curl -s -u sandbox_client_id:sandbox_client_secret \
  -d grant_type=client_credentials http://127.0.0.1:4010/oauth/token | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')

curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -d '{"name":"Acme Corp","email":"billing@acme.test","external_id":"acme-1"}' \
  http://127.0.0.1:4010/customers

curl -s -H "Authorization: Bearer $TOKEN" 'http://127.0.0.1:4010/customers?limit=10'
