#!/usr/bin/env bash
# Owns the proof that the container recipes work, against the image CI builds and podman's
# Docker-compatible API (`podman system service`; no Docker engine here): the Node Testcontainers
# module's example (`billing-sandbox/testcontainers` from the packed tarball, beside testcontainers
# from this checkout's install), the Python recipe (pytest from Debian's python3-pytest, the docker CLI or podman),
# and the CI recipes' steps (ci-check.sh, which the GitHub Actions and GitLab CI recipes run). The
# Java and Go recipes, whose libraries cannot be fetched here, are compiled against their standard
# libraries with only those libraries' names left unresolved (scripts/lib/JavaRecipeCheck.java,
# scripts/lib/go-recipe-check); each check is skipped, saying so, when its compiler is missing.
#
# Environment:
#   IMAGE=NAME                   the image (default localhost/billing-sandbox:smoke, which
#                                `KEEP_IMAGE=1 bash scripts/container-smoke.sh` leaves; built that way when missing)
#   PACK_TARBALL=FILE            the packed package (default: npm pack of this tree)
#   REMOVE_IMAGE=1               remove the image and its base afterwards (.ci/run: the smoke kept them for this)
#   CONTAINER_SMOKE_REQUIRED=1   a machine that cannot run containers fails instead of skipping
set -euo pipefail

ROOT_DIR="$(cd "$(dirname "$0")/.." && pwd)"
IMAGE="${IMAGE:-localhost/billing-sandbox:smoke}"
BASE=localhost/billing-sandbox-base:smoke
RECIPES="$ROOT_DIR/examples/other-languages"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/billing-sandbox-recipes.XXXXXX")"
SERVICE_PID=""
CONTAINERS=()

log() { printf '[container-recipes] %s\n' "$*"; }
fail() { log "FAIL: $*"; exit 1; }
skip() {
  if [[ "${CONTAINER_SMOKE_REQUIRED:-}" == 1 ]]; then fail "containers cannot run here: $*"; fi
  log "SKIP: $*"
  exit 0
}
cleanup() {
  local status=$?
  for name in "${CONTAINERS[@]}"; do podman rm -f -t 0 "$name" >/dev/null 2>&1 || true; done
  # What Testcontainers started and a failed test left running (Ryuk, its reaper, is off under podman).
  if command -v podman >/dev/null 2>&1; then
    podman ps -aq --filter label=org.testcontainers=true --filter "ancestor=$IMAGE" 2>/dev/null | xargs -r podman rm -f -t 0 >/dev/null 2>&1 || true
  fi
  if [[ -n "$SERVICE_PID" ]]; then kill "$SERVICE_PID" 2>/dev/null || true; wait "$SERVICE_PID" 2>/dev/null || true; fi
  if [[ "${REMOVE_IMAGE:-}" == 1 ]] && command -v podman >/dev/null 2>&1; then podman rmi -f "$IMAGE" "$BASE" >/dev/null 2>&1 || true; fi
  rm -rf "$WORK"
  exit "$status"
}
trap cleanup EXIT

# --- the recipes that cannot run here, compiled against their standard libraries ------------------
if command -v java >/dev/null 2>&1; then
  checked="$(java "$ROOT_DIR/scripts/lib/JavaRecipeCheck.java" "$RECIPES"/java/*.java)" || { printf '%s\n' "$checked"; fail "the Java recipe"; }
  log "Java: $(tail -n 1 <<<"$checked")"
else
  log "Java: not checked (no JDK on this machine)"
fi
if command -v go >/dev/null 2>&1; then
  (cd "$ROOT_DIR/scripts/lib/go-recipe-check" && GO111MODULE=off go build -o "$WORK/go-recipe-check" main.go) || fail "building scripts/lib/go-recipe-check"
  checked="$("$WORK/go-recipe-check" "$RECIPES"/go/*.go)" || { printf '%s\n' "$checked"; fail "the Go recipe"; }
  log "Go: $(tail -n 1 <<<"$checked")"
elif command -v gofmt >/dev/null 2>&1; then
  [[ -z "$(gofmt -l -e "$RECIPES"/go)" ]] || fail "gofmt: the Go recipe is not gofmt-clean"
  log "Go: syntax checked with gofmt only (no go command to type-check it)"
else
  log "Go: not checked (no Go toolchain on this machine: apt-get install golang-go)"
fi

# --- the image, podman's API service ---------------------------------------------------------------
if ! command -v podman >/dev/null 2>&1 || ! podman image exists "$IMAGE" 2>/dev/null; then
  log "no image $IMAGE: building it with scripts/container-smoke.sh (KEEP_IMAGE=1)"
  KEEP_IMAGE=1 bash "$ROOT_DIR/scripts/container-smoke.sh"
  command -v podman >/dev/null 2>&1 && podman image exists "$IMAGE" || skip "no image $IMAGE (the container smoke skipped: see above)"
fi
# What podman needs here, for every client at once: runc, and limits this host may set (podman asks
# runc for 1048576 open files by default; without CAP_SYS_RESOURCE: "error setting rlimits"). The
# docs' examples/running/containers.conf, with this shell's open-file limits.
sed "s/nofile=[0-9]*:[0-9]*/nofile=$(ulimit -Sn):$(ulimit -Hn)/" "$ROOT_DIR/examples/running/containers.conf" >"$WORK/containers.conf"
export CONTAINERS_CONF="$WORK/containers.conf"
SOCKET="$WORK/podman.sock"
podman system service --time=0 "unix://$SOCKET" >"$WORK/service.log" 2>&1 &
SERVICE_PID=$!
for _ in $(seq 100); do curl -fsS --unix-socket "$SOCKET" http://podman/_ping >/dev/null 2>&1 && break; sleep 0.1; done
curl -fsS --unix-socket "$SOCKET" http://podman/_ping >/dev/null 2>&1 || { cat "$WORK/service.log"; fail "podman system service did not answer on $SOCKET"; }
export DOCKER_HOST="unix://$SOCKET"
# The docker CLI speaks to podman's API as to Docker's; without it the podman CLI runs the same containers.
if command -v docker >/dev/null 2>&1; then DOCKER=docker; else DOCKER=podman; fi
log "podman $(podman version --format '{{.Client.Version}}') API service on $SOCKET (runc); image $IMAGE; container CLI: $DOCKER"

# Where a container reaches this machine: host.docker.internal with host-gateway (Docker, podman 5.3
# and newer), else host.containers.internal, which podman adds itself.
HOST_ALIAS=host.containers.internal
probe_hosts=()
[[ "$DOCKER" == docker ]] && probe_hosts=(--add-host host.docker.internal:host-gateway)
# (The answer is read from the output: the docker CLI's `run --rm` exits 0 whatever the container did, against podman 4.)
if [[ "$($DOCKER run --rm "${probe_hosts[@]}" --entrypoint node "$IMAGE" -e "require('node:dns').lookup('host.docker.internal', (e) => console.log(e ? 'unresolved' : 'resolved'))" 2>/dev/null)" == resolved ]]; then
  HOST_ALIAS=host.docker.internal
fi
log "containers reach this machine as $HOST_ALIAS"

# --- Node: billing-sandbox/testcontainers from the packed tarball ----------------------------------
if [[ -n "${PACK_TARBALL:-}" ]]; then
  TARBALL="$(readlink -f "$PACK_TARBALL")"
else
  log "npm pack (prepack builds dist/)"
  (cd "$ROOT_DIR" && npm pack --pack-destination "$WORK" --loglevel=error >"$WORK/pack.log" 2>&1) || { cat "$WORK/pack.log"; fail "npm pack"; }
  TARBALL="$(ls "$WORK"/billing-sandbox-*.tgz)"
fi
NODE_APP="$WORK/node"
mkdir -p "$NODE_APP/node_modules/billing-sandbox"
cp "$ROOT_DIR"/examples/testcontainers/* "$NODE_APP/"
# The tarball's own files, and beside them this checkout's install (npm ci: the package's
# dependencies, testcontainers, TypeScript) linked in rather than installed a second time (some 25 s
# and 200 MB): scripts/consumers.sh proves a partner's install of the tarball itself.
tar -xzf "$TARBALL" -C "$NODE_APP/node_modules/billing-sandbox" --strip-components=1
for dependency in "$ROOT_DIR"/node_modules/* "$ROOT_DIR"/node_modules/.bin; do
  [[ -e "$NODE_APP/node_modules/$(basename "$dependency")" ]] || ln -s "$dependency" "$NODE_APP/node_modules/$(basename "$dependency")"
done
printf '{ "private": true, "type": "module" }\n' >"$NODE_APP/package.json"
cat >"$NODE_APP/tsconfig.json" <<'EOF'
{ "compilerOptions": { "module": "nodenext", "moduleResolution": "nodenext", "target": "es2022", "strict": true, "noEmit": true, "skipLibCheck": true, "types": ["node"] },
  "files": ["types.mts"] }
EOF
# The module's types as a TypeScript partner reads them: the started container is a SandboxConnection.
cat >"$NODE_APP/types.mts" <<'EOF'
import type { SandboxConnection } from 'billing-sandbox';
import { BillingSandboxContainer } from 'billing-sandbox/testcontainers';
const started = await new BillingSandboxContainer('billing-sandbox:latest').withFixtures('demo').withRateLimit(0).start();
const connection: SandboxConnection = started;
const customer = await connection.api.POST('/customers', { body: { name: 'Typed' } });
const id: string = customer.id;
const port: number = started.getMappedPort(4010);
console.log(id, port, await started.webhookUrl('http://0.0.0.0:1/hooks'));
await started.close();
EOF
log "Node: the tarball beside testcontainers $(node -p "require('$NODE_APP/node_modules/testcontainers/package.json').version")"
(cd "$NODE_APP" && node_modules/.bin/tsc -p tsconfig.json) || fail "the types of billing-sandbox/testcontainers"
log "Node: the Testcontainers module's types check (TypeScript, module nodenext)"
started=$SECONDS
(cd "$NODE_APP" && TESTCONTAINERS_RYUK_DISABLED=true BILLING_SANDBOX_IMAGE="$IMAGE" node --test --test-reporter=spec sandbox.test.mjs) >"$WORK/node.log" 2>&1 \
  || { cat "$WORK/node.log"; fail "examples/testcontainers/sandbox.test.mjs against podman's API"; }
log "Node: examples/testcontainers/sandbox.test.mjs: $(grep -cE '^ *✔' "$WORK/node.log") passed in $((SECONDS - started))s (testcontainers against podman's API, not mocked)"

# --- the CI recipes' steps, against a container run as a CI service would run it ------------------
name="billing-sandbox-recipes-$$"
CONTAINERS+=("$name")
add_host=()
[[ "$HOST_ALIAS" == host.docker.internal ]] && add_host=(--add-host host.docker.internal:host-gateway)
$DOCKER run -d --name "$name" -p 127.0.0.1::4010 "${add_host[@]}" -e SANDBOX_RATE_LIMIT=0 -e SANDBOX_ALLOW_HTTP_WEBHOOKS=1 "$IMAGE" >/dev/null \
  || fail "could not run $IMAGE"
port="$($DOCKER port "$name" 4010/tcp | head -n 1 | sed 's/.*://')"
bash "$RECIPES/ci-check.sh" "http://127.0.0.1:$port" "$HOST_ALIAS" >"$WORK/ci-check.log" 2>&1 || { cat "$WORK/ci-check.log"; fail "examples/other-languages/ci-check.sh"; }
log "CI recipes' steps (ci-check.sh): $(tail -n 1 "$WORK/ci-check.log")"
podman rm -f -t 5 "$name" >/dev/null 2>&1 || true

# --- Python: the pytest fixture recipe, with Debian's pytest -------------------------------------
PYTHON=/usr/bin/python3
if ! "$PYTHON" -c 'import pytest' >/dev/null 2>&1; then
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    log "installing python3-pytest with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq python3-pytest >/dev/null 2>&1 \
      || { apt-get -o DPkg::Lock::Timeout=300 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq python3-pytest >/dev/null; } \
      || fail "apt-get install python3-pytest"
  else
    fail "$PYTHON has no pytest (apt-get install python3-pytest)"
  fi
fi
cp -r "$RECIPES/python" "$WORK/python"
started=$SECONDS
(cd "$WORK/python" && DOCKER="$DOCKER" BILLING_SANDBOX_IMAGE="$IMAGE" BILLING_SANDBOX_HOST_ALIAS="$HOST_ALIAS" \
  "$PYTHON" -m pytest -q -p no:cacheprovider) >"$WORK/python.log" 2>&1 || { cat "$WORK/python.log"; fail "the Python recipe"; }
log "Python: $(grep -E 'passed|failed' "$WORK/python.log" | tail -n 1) (pytest $("$PYTHON" -m pytest --version 2>&1 | sed 's/[^0-9.]//g'), Python $("$PYTHON" -c 'import platform; print(platform.python_version())'))"
log "PASS"
