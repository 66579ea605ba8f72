# Export "after-setup" (its secrets redacted) to a file, then import it back under another name, as
# another sandbox (or a colleague's) would; list what the partner keeps.
FILE=$(mktemp)
curl -s -H "Authorization: Bearer $TOKEN" http://127.0.0.1:4010/_sandbox/snapshots/after-setup > "$FILE"
{ printf '{"name":"from-a-file","replace":true,"document":'; cat "$FILE"; printf '}'; } |
  curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' --data-binary @- \
  http://127.0.0.1:4010/_sandbox/snapshots
curl -s -H "Authorization: Bearer $TOKEN" http://127.0.0.1:4010/_sandbox/snapshots
rm "$FILE"
