#!/usr/bin/env bash
# Installs what Dispatch needs and is missing: a current LTS Node (22+; into .tools/ when the
# machine's is older), npm packages, Debian's redis-server and librdkafka-dev (for the embedded
# broker), and with `--test` Chromium and ffmpeg for the tests. Idempotent and quiet when
# everything is there. `setup.sh [--test] -- COMMAND…` then runs COMMAND with that Node first on
# PATH, which is how the npm scripts run under it.
set -euo pipefail
cd "$(dirname "$0")/.."
test_tools=false
if [ "${1:-}" = "--test" ]; then test_tools=true; shift; fi
if [ "${1:-}" = "--" ]; then shift; fi

source scripts/lib/node-lts.sh
ensure_lts_node

need=()
command -v redis-server >/dev/null || need+=(redis-server)
[ -f /usr/include/librdkafka/rdkafka_mock.h ] || need+=(librdkafka-dev)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v cc >/dev/null || need+=(gcc libc6-dev)
if $test_tools; then
  command -v chromium >/dev/null || need+=(chromium)
  command -v kcat >/dev/null || need+=(kcat)
  command -v ffmpeg >/dev/null || need+=(ffmpeg)
fi

if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian packages: ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    echo "setup: missing Debian packages: ${need[*]}" >&2
    echo "setup: install them (sudo apt-get install ${need[*]}) or set REDIS_URL / KAFKA_BROKERS to servers of your own." >&2
    [ -n "${REDIS_URL:-}" ] && [ -n "${KAFKA_BROKERS:-}" ] || exit 1
  fi
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  # `npm install`, not `npm ci`: npm 11 writes lock files without the other platforms' optional
  # packages (npm/cli#4828), which `npm ci` then refuses. The lock still pins every version.
  echo "setup: installing npm packages"
  npm install --no-audit --no-fund --loglevel=error
fi

if [ -f /usr/include/librdkafka/rdkafka_mock.h ]; then
  node --import tsx -e 'require("./scripts/lib/kafka-mock").buildMockBroker()'
fi

if [ $# -gt 0 ]; then exec "$@"; fi
