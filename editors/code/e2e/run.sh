#!/usr/bin/env bash
# The VS Code extension's end-to-end test: the packaged extension (.vsix) in a real VS Code
# (code-server, from the npm registry), driven by Debian's Chromium through playwright-core.
#
#   bash editors/code/e2e/run.sh
#
# Installs what it needs, idempotently: Debian's chromium (apt, as root) when /usr/bin/chromium
# is missing; code-server under target/editor-e2e/ (npm, its native modules built here against
# the machine's Node.js headers); the extension's and the test's npm packages. Then packages
# the extension and runs test.mjs, which starts code-server on 127.0.0.1 (auth none, a free
# port, its own user-data and extensions directories), installs the .vsix there with
# `kiln.path` set to the kiln binary, and checks what a user sees (test.mjs says what).
# Prints `RESULT editor-e2e checks=N passed=N failed=N`; exits non-zero on any failure.
#
# KILN: the kiln binary (default target/debug/kiln, built with `cargo build -p kiln-cli` when
# missing; CI has it from `cargo test --workspace`).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
ext=$root/editors/code
out=$root/target/editor-e2e
# code-server 4.100.3 (VS Code 1.100.3) is the last release whose engines field is Node.js 20,
# the machine's Node.js; later ones want 22 or 24.
cs_version=4.100.3
node_major=$(node -p 'process.versions.node.split(".")[0]')
[[ $node_major == 20 ]] || echo "editor-e2e: warning: Node.js $node_major; code-server $cs_version wants 20"
mkdir -p "$out"
t0=$(date +%s)
phase() { echo "editor-e2e: $* ($(( $(date +%s) - t0 )) s)"; }
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

kiln=${KILN:-$root/target/debug/kiln}
if [[ ! -x $kiln ]]; then
  phase "building kiln (cargo build -p kiln-cli)"
  (cd "$root" && cargo build -q -p kiln-cli)
fi

if [[ ! -x /usr/bin/chromium ]]; then
  phase "installing Debian's chromium"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

# code-server from the npm registry, without its postinstall: that one also builds kerberos
# (needs libkrb5-dev) and downloads ripgrep from GitHub (unreachable here). We install its
# packages with --ignore-scripts and build only the native modules the server loads: argon2
# (required at start), @vscode/spdlog (logs), native-watchdog and @parcel/watcher (prebuilt,
# file watching). No node-pty (no terminal is opened), no ripgrep (no search).
cs=$out/code-server-$cs_version
if [[ ! -f $cs/.installed ]]; then
  phase "installing code-server $cs_version"
  [[ -f /usr/include/node/node_api.h ]] || {
    echo "editor-e2e: no Node.js headers in /usr/include/node (needed to build code-server's native modules)"
    exit 1
  }
  export npm_config_nodedir=/usr
  rm -rf "$cs" "$cs.tmp"
  mkdir -p "$cs.tmp"
  (
    cd "$cs.tmp"
    echo '{ "private": true }' >package.json
    npm install --ignore-scripts --loglevel=error "code-server@$cs_version"
    npm rebuild --loglevel=error argon2
    cd node_modules/code-server/lib/vscode
    npm install --omit=dev --ignore-scripts --loglevel=error
    npm rebuild --loglevel=error @vscode/spdlog native-watchdog @parcel/watcher
    # What code-server's postinstall.sh links.
    ln -sfn node_modules node_modules.asar
    ln -sfn code-linux.sh bin/remote-cli/code-server
    ln -sfn browser-linux.sh bin/helpers/browser.sh
  ) >"$out/install.log" 2>&1 || { cat "$out/install.log"; exit 1; }
  touch "$cs.tmp/.installed"
  mv "$cs.tmp" "$cs"
fi

phase "packaging the extension"
(
  cd "$ext"
  [[ -d node_modules && node_modules/.package-lock.json -nt package-lock.json ]] || npm ci --loglevel=error
  npm run -s compile
  npm run -s package >/dev/null
) || { echo "editor-e2e: the extension did not build"; exit 1; }
(
  cd "$here"
  [[ -d node_modules && node_modules/.package-lock.json -nt package-lock.json ]] || npm ci --loglevel=error
)

phase "running the test"
# test.mjs kills code-server's process group when it ends; should it be killed itself (the
# timeout), this does.
cleanup() {
  local pid
  pid=$(cat "$out/code-server.pid" 2>/dev/null) || return 0
  kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$out/code-server.pid"
}
trap cleanup EXIT
status=0
KILN=$kiln \
  CODE_SERVER=$cs/node_modules/code-server/out/node/entry.js \
  VSIX=$ext/kiln-ptx.vsix \
  OUT=$out \
  PTX=$root/test-data/lsp/two_kernels.ptx \
  timeout -k 10 420 node "$here/test.mjs" 2>&1 | tee "$out/test.log" || status=$?
phase "done (exit $status; log target/editor-e2e/test.log, screenshots target/editor-e2e/*.png)"
exit $status
