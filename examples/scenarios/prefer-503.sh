curl -s -H "Authorization: Bearer $TOKEN" -H 'Prefer: code=503' http://127.0.0.1:4010/invoices
