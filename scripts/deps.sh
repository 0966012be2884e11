#!/usr/bin/env bash
# deps.sh installs the lock-service binaries lockcheck needs, and only when
# they are missing. It is idempotent: a second run with everything present
# does nothing and exits 0. Both `make run` and `make test` call it.
set -euo pipefail

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || need+=(redis-tools)

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "deps: missing ${need[*]} and not root (no sudo): install them with apt-get" >&2
    exit 3
  fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "deps: missing ${need[*]} and no apt-get on this machine: install them by hand" >&2
  exit 3
fi
echo "deps: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# Debian's package starts a system redis-server on 6379; lockcheck starts its
# own on free ports and does not need it. Leave it: it is not ours to stop.
for b in redis-server redis-cli; do
  command -v "$b" >/dev/null 2>&1 || { echo "deps: $b still missing after apt-get install" >&2; exit 3; }
done
