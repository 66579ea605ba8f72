#!/usr/bin/env bash
# Owns the proof that the Dockerfile works without a Docker engine or an image registry: podman/buildah
# build it (--isolation=chroot) on a base image assembled from this machine's own node, npm and libraries,
# then run it with runc, wait for health, get a token, call the API, stop it with SIGTERM and check exit 0
# and the flushed data file. Prints SKIP (exit 0) only when this machine cannot run containers at all.
#
# Environment:
#   SMOKE_SOURCE=head            build from the last commit (git archive) instead of the working tree
#   CONTAINER_SMOKE_REQUIRED=1   a machine that cannot run containers fails instead of skipping
#   KEEP_IMAGE=1                 keep the built images (localhost/billing-sandbox:smoke) afterwards
set -euo pipefail

ROOT_DIR="$(cd "$(dirname "$0")/.." && pwd)"
SCRIPTS_DIR="$ROOT_DIR/scripts"
IMAGE=localhost/billing-sandbox:smoke
BASE=localhost/billing-sandbox-base:smoke
NAME="billing-sandbox-smoke-$$"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/billing-sandbox-container.XXXXXX")"

log() { printf '[container-smoke] %s\n' "$*"; }
# shellcheck source=smoke-lib.sh
source "$SCRIPTS_DIR/smoke-lib.sh"
fail() { log "FAIL: $*"; exit 1; }
skip() {
  if [[ "${CONTAINER_SMOKE_REQUIRED:-}" == 1 ]]; then fail "containers cannot run here: $*"; fi
  log "SKIP: containers cannot run on this machine: $*"
  exit 0
}

cleanup() {
  local status=$?
  if command -v podman >/dev/null 2>&1; then
    podman rm -f -t 0 "$NAME" >/dev/null 2>&1 || true
    if [[ "${KEEP_IMAGE:-}" != 1 ]]; then podman rmi -f "$IMAGE" "$BASE" >/dev/null 2>&1 || true; fi
  fi
  rm -rf "$WORK"
  exit "$status"
}
trap cleanup EXIT

# --- podman and runc (Debian packages); installed when missing and we may use apt-get ----------------
# strip (binutils) goes into the base: the Dockerfile strips node's symbol tables with it.
if ! command -v podman >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1 || ! command -v strip >/dev/null 2>&1; then
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    log "installing podman, runc and binutils with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    if ! { apt-get -o DPkg::Lock::Timeout=300 update -qq && apt-get -o DPkg::Lock::Timeout=300 install -y -qq podman runc binutils >/dev/null; }; then
      skip "podman/runc/binutils could not be installed with apt-get"
    fi
  else
    skip "podman, runc and strip are not all installed (apt-get install podman runc binutils) and cannot be installed here"
  fi
fi
PODMAN=(podman)
RUN=(podman --runtime runc)
# Podman asks runc for 1048576 open files and processes by default; a host that may not raise its
# limits (no CAP_SYS_RESOURCE) refuses with "error setting rlimits". Ask for this shell's open-file
# limit and a modest process limit instead.
RUN_LIMITS=(--ulimit "nofile=$(ulimit -Sn):$(ulimit -Hn)" --ulimit nproc=4096:4096)

# --- a base image from this machine's node: FROM scratch + COPY rootfs/ / ----------------------------
NODE_BIN="$(readlink -f "$(command -v node)")"
NPM_DIR="$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd)"
[[ -f "$NPM_DIR/bin/npm-cli.js" ]] || fail "cannot find npm next to $(command -v npm)"
[[ "$(node -p 'process.versions.node.split(".")[0]')" == 22 ]] || log "note: the base is built from node $(node -v); the image default is Node 22 (node:22-bookworm-slim)"

ROOTFS="$WORK/base/rootfs"
mkdir -p "$ROOTFS"/{usr/bin,usr/sbin,usr/lib,usr/lib64,usr/local/bin,usr/local/lib,etc,tmp,root,home/node,data}
# Debian is usr-merged: keep the same layout so the dynamic loader path in every binary resolves.
ln -s usr/bin "$ROOTFS/bin"; ln -s usr/sbin "$ROOTFS/sbin"; ln -s usr/lib "$ROOTFS/lib"; ln -s usr/lib64 "$ROOTFS/lib64"

in_usr() { case "$1" in /bin/*|/sbin/*|/lib/*|/lib64/*) printf '/usr%s' "$1" ;; *) printf '%s' "$1" ;; esac; }
declare -A SEEN=()
add_with_libs() { # add_with_libs SOURCE DEST: the file (dereferenced) and every library it loads
  local src="$1" dest="$2" lib
  install -D -m 0755 "$(readlink -f "$src")" "$ROOTFS$dest"
  while read -r lib; do
    [[ -n "$lib" && -z "${SEEN[$lib]:-}" ]] || continue
    SEEN[$lib]=1
    install -D -m 0755 "$(readlink -f "$lib")" "$ROOTFS$(in_usr "$lib")"
  done < <(ldd "$src" 2>/dev/null | awk '/=> \//{print $3} /^[ \t]*\/[^ ]+ \(/{print $1}')
}

add_with_libs "$NODE_BIN" /usr/local/bin/node
# Debug symbols are half of a distribution's node binary; the official images ship it without them.
if command -v strip >/dev/null 2>&1; then strip --strip-debug "$ROOTFS/usr/local/bin/node"; fi
# What the Dockerfile's RUN steps and npm scripts use: sh, env, mkdir, chown, tar, gzip and strip.
for tool in dash env mkdir chown chmod rm cp mv ln ls cat tar gzip strip; do
  path="$(command -v "$tool")" || fail "host tool $tool is missing"
  add_with_libs "$path" "/usr/bin/$tool"
done
ln -s dash "$ROOTFS/usr/bin/sh"
# The whole C and C++ runtime, as in a Debian base image: native addons (pdf.js's canvas loads
# librt) need more of libc than node itself links.
if command -v dpkg >/dev/null 2>&1; then
  while read -r lib; do
    [[ -e "$lib" && ! -d "$lib" && -z "${SEEN[$lib]:-}" ]] || continue
    SEEN[$lib]=1
    install -D -m 0755 "$(readlink -f "$lib")" "$ROOTFS$(in_usr "$lib")"
  done < <(dpkg -L libc6 libgcc-s1 libstdc++6 2>/dev/null | grep -E '/lib[^/]*\.so[.0-9]*$' | grep -v '/gconv/')
fi
mkdir -p "$ROOTFS/usr/local/lib/node_modules"
cp -a "$NPM_DIR" "$ROOTFS/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$ROOTFS/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$ROOTFS/usr/local/bin/npx"
# The same users as the official node images: root, and node (1000) for the app.
printf 'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\n' >"$ROOTFS/etc/passwd"
printf 'root:x:0:\nnode:x:1000:\n' >"$ROOTFS/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$ROOTFS/etc/nsswitch.conf"
chmod 1777 "$ROOTFS/tmp"
chown 1000:1000 "$ROOTFS/home/node"
# This machine's way to the package registry, so `npm ci` in the build works as it does here: the
# trust store (a TLS-inspecting proxy's CA may be in it) and npm's global config (no user secrets).
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
CA_ENV=""
if [[ -f "$CA_BUNDLE" ]]; then
  install -D -m 0644 "$CA_BUNDLE" "$ROOTFS$CA_BUNDLE"
  CA_ENV="ENV NODE_EXTRA_CA_CERTS=$CA_BUNDLE"
fi
NPM_GLOBALCONFIG="$(npm config get globalconfig 2>/dev/null || true)"
if [[ -f "$NPM_GLOBALCONFIG" ]]; then
  while read -r file; do # files a global npmrc names (cafile=...) come along at the same path
    if [[ -f "$file" ]]; then install -D -m 0644 "$file" "$ROOTFS$file"; fi
  done < <(sed -n 's/^[[:space:]]*cafile[[:space:]]*=[[:space:]]*//p' "$NPM_GLOBALCONFIG")
  install -D -m 0644 "$NPM_GLOBALCONFIG" "$ROOTFS/usr/local/etc/npmrc"
fi
cat >"$WORK/base/Containerfile" <<EOF
FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
$CA_ENV
CMD ["node"]
EOF

log "building the base image $BASE from $NODE_BIN ($(node -v)) and npm $(npm -v 2>/dev/null)"
if ! "${PODMAN[@]}" build --isolation=chroot --format docker -q -t "$BASE" "$WORK/base" >"$WORK/base-build.log" 2>&1; then
  tail -n 20 "$WORK/base-build.log"
  skip "podman cannot build even a FROM scratch image (see above)"
fi
if ! probe="$("${RUN[@]}" run --rm "${RUN_LIMITS[@]}" --network none "$BASE" node -e 'console.log("probe-ok")' 2>&1)" || [[ "$probe" != *probe-ok* ]]; then
  printf '%s\n' "$probe" | tail -n 20
  skip "podman --runtime runc cannot run a container (see above)"
fi

# --- the image from the repository's Dockerfile --------------------------------------------------
CONTEXT="$(source_tree "$WORK/context" "building from")"
# The registry this machine's npm uses goes in as NPM_REGISTRY, as a company's mirror would (the
# build then installs through the argument, not only through the npmrc the base carries).
REGISTRY="$(npm config get registry 2>/dev/null || true)"
REVISION="$(git -C "$ROOT_DIR" rev-parse HEAD 2>/dev/null || true)"
CREATED="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
log "building $IMAGE from Dockerfile (BASE_IMAGE=$BASE${REGISTRY:+, NPM_REGISTRY set})"
started=$SECONDS
if ! "${PODMAN[@]}" build --isolation=chroot --format docker --pull=never --layers=false \
    --build-arg "BASE_IMAGE=$BASE" --build-arg "NPM_REGISTRY=$REGISTRY" --build-arg "REVISION=$REVISION" --build-arg "CREATED=$CREATED" \
    -t "$IMAGE" -f "$CONTEXT/Dockerfile" "$CONTEXT" >"$WORK/build.log" 2>&1; then
  tail -n 40 "$WORK/build.log"
  fail "the Dockerfile did not build"
fi
log "built in $((SECONDS - started))s"

size_of() { "${PODMAN[@]}" image inspect --format '{{.Size}}' "$1"; }
image_bytes="$(size_of "$IMAGE")"
# What the megabytes are, measured inside the image by its own node (it has no shell or du).
SIZES_JS='const fs=require("fs"),p=require("path");const du=(d)=>{let n=0;for(const e of fs.readdirSync(d,{withFileTypes:true})){const f=p.join(d,e.name);n+=e.isDirectory()?du(f):e.isFile()?fs.statSync(f).size:0}return n};const mb=(n)=>(n/1e6).toFixed(1)+" MB";console.log(["node "+mb(fs.statSync("/usr/local/bin/node").size),"libraries "+mb(du("/usr/lib")),"node_modules "+mb(du("/app/node_modules")),"the package "+mb(du("/app")-du("/app/node_modules"))].join(", "))'
contents="$("${RUN[@]}" run --rm "${RUN_LIMITS[@]}" --network none --health-interval=disable --entrypoint node "$IMAGE" -e "$SIZES_JS" 2>"$WORK/sizes.log")" \
  || { cat "$WORK/sizes.log"; fail "node could not run in the image"; }
log "image size: $((image_bytes / 1000000)) MB: $contents (the base it was built with, $(($(size_of "$BASE") / 1000000)) MB, is not part of it)"
if "${RUN[@]}" run --rm "${RUN_LIMITS[@]}" --network none --health-interval=disable --entrypoint /bin/sh "$IMAGE" -c true >/dev/null 2>&1; then fail "the image has a shell: the runtime stage should be node and its libraries only"; fi

[[ "$("${PODMAN[@]}" image inspect --format '{{.Config.User}}' "$IMAGE")" == node ]] || fail "the image does not run as the node user"
[[ "$("${PODMAN[@]}" image inspect --format '{{json .Config.Healthcheck}}' "$IMAGE")" == *_sandbox/health* ]] || fail "the image has no HEALTHCHECK on /_sandbox/health"
label() { "${PODMAN[@]}" image inspect --format "{{index .Config.Labels \"org.opencontainers.image.$1\"}}" "$IMAGE"; }
[[ "$(label version)" == "$(node -p 'require(process.argv[1]).version' "$ROOT_DIR/package.json")" ]] || fail "the image's org.opencontainers.image.version label is not package.json's version"
[[ "$(label title)" == billing-sandbox && "$(label licenses)" == MIT && "$(label revision)" == "$REVISION" && "$(label base.name)" == "$BASE" ]] \
  || fail "the image's OCI labels are not set: title=$(label title) licenses=$(label licenses) revision=$(label revision) base.name=$(label base.name)"

# --- run it -------------------------------------------------------------------------------------
HOST_PORT="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
DATA_DIR="$WORK/data"
mkdir -p "$DATA_DIR"
chown 1000:1000 "$DATA_DIR" 2>/dev/null || chmod 0777 "$DATA_DIR"
BASE_URL="http://127.0.0.1:$HOST_PORT"
# --health-interval=disable: no systemd timer here; the check is run by hand below.
run_args=(-d --name "$NAME" "${RUN_LIMITS[@]}" --health-interval=disable -v "$DATA_DIR:/data" -e SANDBOX_DATA=/data/sandbox.json -e SANDBOX_LOG_LEVEL=info)
log "running it with runc, published on $BASE_URL"
if ! "${RUN[@]}" run "${run_args[@]}" -p "127.0.0.1:$HOST_PORT:4010" "$IMAGE" --seed 42 --fixtures demo >"$WORK/run.log" 2>&1; then
  # Some hosts cannot set up container networks (no netfilter); the host network still proves the image.
  log "publishing a port failed ($(tail -n 1 "$WORK/run.log")); retrying on the host network"
  "${PODMAN[@]}" rm -f -t 0 "$NAME" >/dev/null 2>&1 || true
  "${RUN[@]}" run "${run_args[@]}" --network host -e PORT="$HOST_PORT" "$IMAGE" --seed 42 --fixtures demo >"$WORK/run.log" 2>&1 \
    || { cat "$WORK/run.log"; fail "the container did not start"; }
fi

healthy=""
for _ in $(seq 1 120); do
  if node -e "fetch('$BASE_URL/_sandbox/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))" 2>/dev/null; then healthy=1; break; fi
  [[ "$("${PODMAN[@]}" inspect --format '{{.State.Running}}' "$NAME")" == true ]] || break
  sleep 0.5
done
[[ -n "$healthy" ]] || { "${PODMAN[@]}" logs "$NAME" | tail -n 30; fail "no answer from $BASE_URL/_sandbox/health"; }
log "healthy: $(node -e "fetch('$BASE_URL/_sandbox/health').then(r=>r.text()).then(console.log)")"
"${PODMAN[@]}" healthcheck run "$NAME" >/dev/null || fail "the image's HEALTHCHECK failed inside the container"
# The logs are read whole before grep: "podman logs | grep -q" dies of SIGPIPE once grep has its
# match, and pipefail would count that as a failure.
container_logs() { "${PODMAN[@]}" logs "$NAME" 2>&1 || true; }
grep -q 'listening on http://0.0.0.0:4010\|listening on http://0.0.0.0:'"$HOST_PORT" <<<"$(container_logs)" \
  || { "${PODMAN[@]}" logs "$NAME" | tail -n 5; fail "no startup line on 0.0.0.0"; }
# Health checks (ours above, the image's own) log at debug: none is an access line at info.
if grep -q '/_sandbox/health' <<<"$(container_logs)"; then "${PODMAN[@]}" logs "$NAME" | grep '/_sandbox/health' | tail -n 3; fail "health checks are logged at info"; fi
uid="$("${PODMAN[@]}" exec "$NAME" node -p 'process.getuid()')"
[[ "$uid" == 1000 ]] || fail "the sandbox runs as uid $uid, not the node user"

# A token with the default credentials, then an API call and a read back.
# The demo fixtures shipped in the image were loaded at start (--fixtures demo): 8 customers, plus ours.
node "$SCRIPTS_DIR/smoke-api.mjs" "$BASE_URL" container-smoke-1 9 container-smoke || fail "the API did not answer as expected"
# pdf.js runs without the native canvas the image leaves out: its rendering warnings stay quiet.
if grep -q 'Warning: Cannot' <<<"$(container_logs)"; then "${PODMAN[@]}" logs "$NAME" | grep 'Warning:'; fail "pdf.js printed warnings in the image"; fi

# --- SIGTERM: a clean exit, and the data file flushed to the volume --------------------------------
log "stopping with SIGTERM"
# (podman may complain on stderr that it has no systemd to remove a health-check timer from: harmless.)
"${PODMAN[@]}" stop -t 20 "$NAME" >/dev/null 2>"$WORK/stop.log" || { cat "$WORK/stop.log"; fail "podman stop failed"; }
code="$("${PODMAN[@]}" inspect --format '{{.State.ExitCode}}' "$NAME")"
[[ "$code" == 0 ]] || { "${PODMAN[@]}" logs "$NAME" | tail -n 20; fail "exit code $code after SIGTERM (want 0)"; }
grep -q 'shutting down' <<<"$(container_logs)" || fail "no shutdown log line: SIGTERM was not handled by the sandbox"
# The data file is a snapshot and its log segments (FILE, FILE.log.N): the write is in one of them.
grep -qs 'container-smoke-1' "$DATA_DIR/sandbox.json" "$DATA_DIR"/sandbox.json.log.* || fail "the data file on the volume does not hold the customer"
log "PASS: exit code 0 after SIGTERM; the data file on the volume holds the customer"
