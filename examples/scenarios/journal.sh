curl -s 'http://127.0.0.1:4010/_sandbox/requests?method=POST&path=/invoices&limit=5'
