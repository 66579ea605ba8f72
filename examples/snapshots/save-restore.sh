# Set the account up once and save it as "after-setup"; a test then makes what it needs, and the
# next test starts from the snapshot again: the customer made after the save is gone.
curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -d '{"name":"Set-up Co"}' http://127.0.0.1:4010/customers
curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -d '{"name":"after-setup","replace":true}' http://127.0.0.1:4010/_sandbox/snapshots

curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
  -d '{"name":"Made by a test"}' http://127.0.0.1:4010/customers
curl -s -X POST -H "Authorization: Bearer $TOKEN" http://127.0.0.1:4010/_sandbox/snapshots/after-setup/restore
curl -s -H "Authorization: Bearer $TOKEN" 'http://127.0.0.1:4010/customers?limit=100'
