#!/usr/bin/env bash
# Owns running examples/parity/record-diff.sh as CI does: build (unless SKIP_BUILD=1), start a
# sandbox in the demo environment's place (another seed, and examples/parity/demo-differs.yaml's two
# planted answers) and the sandbox to diff, run the example through a `billing-sandbox` on PATH,
# then check that its report matches examples/parity/diff-sample.txt (addresses, run id, partner and
# time aside), that it exits 1 (the planted differences), that the recording holds no credential, that
# the JUnit file parses, and that docs/parity.md quotes the example and the sample as they are. Last,
# the fix: the same recording diffed against a sandbox given the scenario exits 0.
# UPDATE=1 rewrites the sample from this run.
set -euo pipefail
ROOT_DIR="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT_DIR"
log() { printf '[record-diff-example] %s\n' "$*"; }

[[ -d node_modules ]] || { log "FAIL: run npm ci at the repository root first"; exit 1; }
if [[ -z "${SKIP_BUILD:-}" ]]; then
  log "building the package (dist/)"
  npm run build --silent >/dev/null
fi

work="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT

# start NAME ARGS...: a CLI on a free port; sets $url.
start() {
  local name="$1"; shift
  node dist/cli.js --port 0 --log-level silent "$@" >"$work/$name.log" 2>&1 &
  local pid=$!
  pids+=("$pid")
  for _ in $(seq 1 150); do
    grep -q ' listening on ' "$work/$name.log" && break
    kill -0 "$pid" 2>/dev/null || { cat "$work/$name.log"; log "FAIL: $name did not start"; exit 1; }
    sleep 0.2
  done
  url="$(grep -o 'listening on [^ ]*' "$work/$name.log" | head -1 | cut -d' ' -f3)"
  [[ -n "$url" ]] || { cat "$work/$name.log"; log "FAIL: $name printed no startup line"; exit 1; }
}
# The stand-in for the demo environment: no rate limit, since curl does not pace itself (a client of
# the real one keeps under its 5 requests per second).
start demo --seed the-demo-environment --rate-limit 0 --scenario examples/parity/demo-differs.yaml
demo="$url"
start sandbox
sandbox="$url"
start fixed --scenario examples/parity/demo-differs.yaml
fixed="$url"
log "demo stand-in at $demo, sandbox at $sandbox"

mkdir -p "$work/bin" "$work/run"
printf '#!/usr/bin/env bash\nexec node %q "$@"\n' "$ROOT_DIR/dist/cli.js" >"$work/bin/billing-sandbox"
chmod +x "$work/bin/billing-sandbox"
set +e
(cd "$work/run" && PATH="$work/bin:$PATH" DEMO_URL="$demo" SANDBOX_URL="$sandbox" RECORD_PORT=0 \
  bash "$ROOT_DIR/examples/parity/record-diff.sh" >"$work/report.txt" 2>"$work/stderr.txt")
code=$?
(cd "$work/run" && node "$ROOT_DIR/dist/cli.js" diff session.har --base-url "$fixed" >"$work/fixed.txt" 2>&1)
fixed_code=$?
set -e

log "$(grep -E '^[0-9]+ exchanges' "$work/report.txt" || true) (exit code $code)"
node - "$work" "$demo" "$sandbox" "$code" "$fixed_code" "${UPDATE:-}" <<'NODE'
const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { XMLValidator } = require('fast-xml-parser');
const [work, demo, sandbox, code, fixedCode, update] = process.argv.slice(2);
const fail = (why) => { console.error(`[record-diff-example] FAIL: ${why}`); process.exit(1); };
const samplePath = 'examples/parity/diff-sample.txt';
const stderr = readFileSync(join(work, 'stderr.txt'), 'utf8');
// What changes from run to run: the addresses, the fresh partner and its key, the run id and start time.
const normalise = (text) => text
  .split(demo).join('http://127.0.0.1:4011')
  .split(sandbox).join('http://127.0.0.1:4010')
  .replace(/^account: a fresh partner \S+ \(diff-\w+\), its (\w+) key \S+; started \S+,/m, 'account: a fresh partner ptn_1a2b3c4d5e6f7a8b9c0d (diff-1a2b3c), its $1 key 1a2b3c4d5e6f7a8b; started 2026-03-02T09:00:00.000Z,');
const report = normalise(readFileSync(join(work, 'report.txt'), 'utf8'));
if (!/^\d+ exchanges: /m.test(report)) fail(`the run printed no totals line; stderr: ${stderr}`);
if (update) {
  writeFileSync(samplePath, report);
  console.log(`[record-diff-example] wrote ${samplePath}`);
} else if (report !== readFileSync(samplePath, 'utf8')) {
  const sample = readFileSync(samplePath, 'utf8').split('\n');
  const lines = report.split('\n');
  const at = lines.findIndex((line, i) => line !== sample[i]);
  fail(`the report differs from ${samplePath} at line ${at + 1}:\n  sample: ${sample[at]}\n  run:    ${lines[at]}\n(UPDATE=1 bash scripts/record-diff-example.sh rewrites the sample)`);
}
const differences = Number(/; (\d+) differences?, /m.exec(report)[1]);
if (differences !== 1 || Number(code) !== 1) fail(`want exactly the one planted difference and exit code 1, got ${differences} and ${code}`);
const har = readFileSync(join(work, 'run', 'session.har'), 'utf8');
if (har.includes('sandbox_client_secret') || /eyJ[\w-]+\.[\w-]+\.[\w-]+/.test(har)) fail('the recording holds a client secret or a token');
const valid = XMLValidator.validate(readFileSync(join(work, 'run', 'diff-junit.xml'), 'utf8'));
if (valid !== true) fail(`the JUnit XML is not well-formed: ${JSON.stringify(valid)}`);
if (Number(fixedCode) !== 0) fail(`the sandbox given examples/parity/demo-differs.yaml still differs:\n${readFileSync(join(work, 'fixed.txt'), 'utf8')}`);
// docs/parity.md shows the example's commands and lines of the sample as they are.
const docs = readFileSync('docs/parity.md', 'utf8');
const script = readFileSync('examples/parity/record-diff.sh', 'utf8');
for (const command of ['billing-sandbox record --target', 'billing-sandbox diff session.har']) {
  const line = script.split('\n').find((l) => l.startsWith(command));
  if (!docs.includes(line)) fail(`docs/parity.md does not show this line of examples/parity/record-diff.sh as it is: ${line}`);
}
const shown = /<!-- example: examples\/parity\/diff-sample.txt(?: excerpt)? -->\n```text\n([\s\S]*?)```/.exec(docs);
if (!shown) fail('docs/parity.md has no diff sample block');
const sample = readFileSync(samplePath, 'utf8');
const missing = shown[1].split('\n').filter((line) => line && line !== '...' && !sample.includes(line));
if (missing.length) fail(`docs/parity.md shows lines the sample does not have:\n  ${missing.join('\n  ')}`);
console.log(`[record-diff-example] PASS: ${differences} difference, exit code ${code}; the fixed sandbox exits ${fixedCode}; no secret in the recording; docs match`);
NODE
