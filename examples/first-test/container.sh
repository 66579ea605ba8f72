docker run -d --name billing-sandbox -p 4010:4010 -e SANDBOX_ALLOW_HTTP_WEBHOOKS=1 \
  --add-host=host.docker.internal:host-gateway billing-sandbox
BASE_URL=http://127.0.0.1:4010 RECEIVER_HOST=host.docker.internal node examples/first-test/first-test.mjs
# invoice_paid received for inv_...: 300 USD, payment pay_...
docker rm -f billing-sandbox
