#!/usr/bin/env bash
# Owns running examples/parity/run.sh as CI does: build, start the sandbox CLI on a free port (with
# the spec's 5 requests per second), run the example through a `billing-sandbox` on PATH at its
# default rate, then check that the text report matches examples/parity/sample-report.txt (run id,
# time, address and counts of 429 retries aside), that the exit code agrees with the sample's
# totals, that the JSON and JUnit reports parse, and that docs/parity.md quotes the example and
# the sample as they are. UPDATE=1 rewrites the sample from this run.
set -euo pipefail
ROOT_DIR="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT_DIR"
log() { printf '[parity-example] %s\n' "$*"; }

[[ -d node_modules ]] || { log "FAIL: run npm ci at the repository root first"; exit 1; }
log "building the package (dist/)"
npm run build --silent >/dev/null

work="$(mktemp -d)"
sandbox_pid=""
cleanup() {
  [[ -n "$sandbox_pid" ]] && kill "$sandbox_pid" 2>/dev/null && wait "$sandbox_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

node dist/cli.js --port 0 --log-level silent >"$work/sandbox.log" 2>&1 &
sandbox_pid=$!
for _ in $(seq 1 150); do
  grep -q ' listening on ' "$work/sandbox.log" && break
  kill -0 "$sandbox_pid" 2>/dev/null || { cat "$work/sandbox.log"; log "FAIL: the sandbox did not start"; exit 1; }
  sleep 0.2
done
url="$(grep -o 'listening on [^ ]*' "$work/sandbox.log" | head -1 | cut -d' ' -f3)"
[[ -n "$url" ]] || { cat "$work/sandbox.log"; log "FAIL: no startup line"; exit 1; }
log "sandbox at $url; running examples/parity/run.sh at the default 5 requests per second"

mkdir -p "$work/bin" "$work/run"
printf '#!/usr/bin/env bash\nexec node %q "$@"\n' "$ROOT_DIR/dist/cli.js" >"$work/bin/billing-sandbox"
chmod +x "$work/bin/billing-sandbox"
set +e
(cd "$work/run" && PATH="$work/bin:$PATH" PARITY_BASE_URL="$url" bash "$ROOT_DIR/examples/parity/run.sh" >"$work/report.txt" 2>"$work/stderr.txt")
code=$?
set -e

log "$(grep -E '^[0-9]+ requests' "$work/report.txt" || true) (exit code $code)"
node - "$work" "$url" "$code" "${UPDATE:-}" <<'NODE'
const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { XMLValidator } = require('fast-xml-parser');
const [work, url, code, update] = process.argv.slice(2);
const fail = (why) => { console.error(`[parity-example] FAIL: ${why}`); process.exit(1); };
const samplePath = 'examples/parity/sample-report.txt';
// What changes from run to run: the address, run id and start time, the request and retry counts, the duration.
const normalise = (text) => text
  .split(url).join('http://127.0.0.1:4010')
  .replace(/^run \w+ \(objects named parity-\w+-\.\.\.\), started \S+,/m, 'run 1a2b3c (objects named parity-1a2b3c-...), started 2026-03-02T09:00:00.000Z,')
  .replace(/^(\d+ requests), \d+ answered 429 and retried, in [\d.]+ s$/m, '$1, 0 answered 429 and retried, in 64.0 s');
const report = normalise(readFileSync(join(work, 'report.txt'), 'utf8'));
const stderr = readFileSync(join(work, 'stderr.txt'), 'utf8');
if (!/^\d+ passed, \d+ failed, \d+ skipped \(\d+ cases\)$/m.test(report)) fail(`the run printed no totals line; stderr: ${stderr}`);
if (update) {
  writeFileSync(samplePath, report);
  console.log(`[parity-example] wrote ${samplePath}`);
} else if (report !== readFileSync(samplePath, 'utf8')) {
  const sample = readFileSync(samplePath, 'utf8').split('\n');
  const lines = report.split('\n');
  const at = lines.findIndex((line, i) => line !== sample[i]);
  fail(`the report differs from ${samplePath} at line ${at + 1}:\n  sample: ${sample[at]}\n  run:    ${lines[at]}\n(UPDATE=1 bash scripts/parity-example.sh rewrites the sample)`);
}
const failed = Number(/^\d+ passed, (\d+) failed/m.exec(report)[1]);
if (Number(code) !== (failed > 0 ? 1 : 0)) fail(`exit code ${code} with ${failed} failed case(s)`);
const json = JSON.parse(readFileSync(join(work, 'run', 'parity-report.json'), 'utf8'));
if (json.summary.failed !== failed) fail('the JSON report disagrees with the text report');
const xml = readFileSync(join(work, 'run', 'parity-junit.xml'), 'utf8');
const valid = XMLValidator.validate(xml);
if (valid !== true) fail(`the JUnit XML is not well-formed: ${JSON.stringify(valid)}`);
// docs/parity.md shows the example's command and lines of the sample as they are.
const docs = readFileSync('docs/parity.md', 'utf8');
const script = readFileSync('examples/parity/run.sh', 'utf8');
const command = /^billing-sandbox parity[\s\S]*/m.exec(script)[0].trim();
if (!docs.includes(command)) fail('docs/parity.md does not show the command of examples/parity/run.sh as it is');
const shown = /<!-- example: examples\/parity\/sample-report.txt excerpt -->\n```text\n([\s\S]*?)```/.exec(docs);
if (!shown) fail('docs/parity.md has no sample report block');
const sample = readFileSync(samplePath, 'utf8');
const missing = shown[1].split('\n').filter((line) => line && line !== '...' && !sample.includes(line));
if (missing.length) fail(`docs/parity.md shows lines the sample does not have:\n  ${missing.join('\n  ')}`);
console.log(`[parity-example] PASS: ${failed} failed case(s), exit code ${code}, reports parse, docs match`);
NODE
