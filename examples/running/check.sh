curl -s http://127.0.0.1:4010/_sandbox/health           # {"status":"ok","version":"0.1.0","reason":null,"since":null}
curl -s -u sandbox_client_id:sandbox_client_secret -d grant_type=client_credentials \
  http://127.0.0.1:4010/oauth/token                      # {"access_token":"...","expires_in":3600,...}
