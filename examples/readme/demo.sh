DEMO=$(curl -s -u sandbox_demo_client_id:sandbox_demo_client_secret \
  -d grant_type=client_credentials http://127.0.0.1:4010/demo/oauth/token | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')
curl -s -H "Authorization: Bearer $DEMO" http://127.0.0.1:4010/demo/customers
