# Owns the container image: build on a Node image, ship only the packed package and the production
# dependencies its command line loads from node_modules, on a root file system of node and the
# libraries it loads (no shell, no npm: FROM scratch), run as the non-root `node` user on
# 0.0.0.0:4010. Any Node 22 (or newer) image with npm, sh and tar works as BASE_IMAGE
# (scripts/container-smoke.sh builds with one made from the host's own node).
ARG BASE_IMAGE=node:22-bookworm-slim
# The npm registry both npm ci steps install from; empty: npm's own default (or the base image's
# npmrc). Behind a company's mirror: --build-arg NPM_REGISTRY=<the mirror's URL>. It is passed to npm
# on the command line, so no layer and no file of the image keeps it; a mirror that needs credentials
# gets them from a build secret, never from a build argument.
ARG NPM_REGISTRY=
# The commit and the build time, for the image's labels (empty unless the build gives them).
ARG REVISION=
ARG CREATED=

# Production dependencies from the lock file (cached until package*.json change), of which the image
# keeps only what the command line loads from node_modules: its bundle (dist/cli/) holds the rest.
# Types, source maps, package docs and the PDF packages' browser builds are not run: left out too.
FROM ${BASE_IMAGE} AS deps
ARG NPM_REGISTRY
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/prune-image.mjs scripts/prune-image.mjs
COPY scripts/lib/cli-externals.mjs scripts/lib/cli-externals.mjs
RUN npm ci ${NPM_REGISTRY:+--registry="$NPM_REGISTRY"} --omit=dev --no-audit --no-fund && npm cache clean --force \
 && node scripts/prune-image.mjs --cli-externals node_modules

# Build with the dev dependencies, then pack: the image ships exactly what the npm package ships
# (package.json "files"), so `docker run` and `npx billing-sandbox` run the same bits.
FROM ${BASE_IMAGE} AS build
ARG NPM_REGISTRY
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci ${NPM_REGISTRY:+--registry="$NPM_REGISTRY"} --no-audit --no-fund
COPY . .
RUN npm run build \
 && npm pack --ignore-scripts --pack-destination /tmp \
 && mkdir -p /out \
 && tar -xzf /tmp/billing-sandbox-*.tgz -C /out --strip-components=1 \
 && node scripts/prune-image.mjs /out/dist \
 && rm -rf /out/dist/cjs/types

# The root file system the sandbox runs on: the base's node, its symbol tables stripped (binutils'
# strip, installed when the base lacks it), the C and C++ libraries it loads, the users root and
# node, /tmp, and /data owned by node. Half the size of a slim Node image, which also carries npm,
# a shell and Debian's tools that the sandbox never runs.
FROM ${BASE_IMAGE} AS runtime
RUN command -v strip >/dev/null || { apt-get update && apt-get install -y --no-install-recommends binutils && rm -rf /var/lib/apt/lists/*; }
COPY scripts/runtime-rootfs.mjs /tmp/runtime-rootfs.mjs
RUN node /tmp/runtime-rootfs.mjs /rootfs

FROM scratch
ARG BASE_IMAGE
ARG REVISION
ARG CREATED
# The OCI annotations registries and scanners read (version: package.json's, test/docs-examples.test.ts
# holds them equal).
LABEL org.opencontainers.image.title="billing-sandbox" \
      org.opencontainers.image.description="A stateful sandbox of a partner billing, payments and payables REST API, for tests" \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.vendor="billing-sandbox maintainers" \
      org.opencontainers.image.base.name="${BASE_IMAGE}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
COPY --from=runtime /rootfs/ /
ENV PATH=/usr/local/bin:/usr/bin:/bin \
    NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4010
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /out/ ./
# /data is the place for a data file: mount a volume there and pass --data /data/sandbox.json
# (or SANDBOX_DATA=/data/sandbox.json). Without it the sandbox keeps everything in memory.
USER node
EXPOSE 4010
# No curl or shell in the image: node itself asks the control plane (with the admin token when one is set).
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["node", "-e", "const t=process.env.SANDBOX_ADMIN_TOKEN;fetch('http://127.0.0.1:'+(process.env.PORT||4010)+'/_sandbox/health',{headers:t?{'x-sandbox-admin-token':t}:{}}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The CLI handles SIGTERM and SIGINT itself (in-flight requests finish, the data file is flushed),
# so node can be PID 1. Flags go after the image name: docker run IMAGE --seed 42
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "dist/cli.js"]
