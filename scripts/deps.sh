#!/usr/bin/env bash
# deps.sh installs what lockcheck needs from Debian's packages, and only what
# is missing. It is idempotent: a second run with everything present does
# nothing and exits 0. Both `make run` and `make test` call it.
#
#   redis-server, redis-cli   Redis lock nodes and the storage node
#   redis-sentinel            the Sentinel topology (failover)
#   gcc                       builds the clock shim (server clock jumps)
#   java, zookeeper.jar       ZooKeeper 3.8 ensembles (package zookeeper)
#   chromium                  the report's browser test
#   python3-redis, python3-kazoo  the redis-py-lock and kazoo-lock workers
#                             (Debian's /usr/bin/python3, workers/python/)
#   libcurator-recipes-java, javac  the curator-mutex worker (workers/java/,
#                             compiled on first use)
#   postgresql-15             PostgreSQL lock designs (initdb, postgres)
#   mariadb-server            MariaDB lock designs (mariadbd, mariadb-install-db)
#   etcd-server               etcd clusters (the etcd-mutex designs)
set -euo pipefail

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || need+=(redis-tools)
command -v redis-sentinel >/dev/null 2>&1 || need+=(redis-sentinel)
command -v gcc >/dev/null 2>&1 || need+=(gcc libc6-dev)
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
[ -f /usr/share/java/zookeeper.jar ] || need+=(zookeeper)
[ -f /usr/share/java/slf4j-simple.jar ] || need+=(libslf4j-java)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ -x /usr/bin/python3 ] || need+=(python3)
/usr/bin/python3 -c 'import redis' >/dev/null 2>&1 || need+=(python3-redis)
/usr/bin/python3 -c 'import kazoo' >/dev/null 2>&1 || need+=(python3-kazoo)
[ -f /usr/share/java/curator-recipes.jar ] || need+=(libcurator-recipes-java)
[ -f /usr/share/java/jackson-databind.jar ] || need+=(libjackson2-databind-java)
command -v javac >/dev/null 2>&1 || need+=(default-jdk-headless)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql-15)
command -v mariadb-install-db >/dev/null 2>&1 || need+=(mariadb-server)
command -v etcd >/dev/null 2>&1 || need+=(etcd-server)

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
# Debian's zookeeper package depends on the full default-jre; headless is
# enough for us but apt decides. Daemons the packages would start are not
# ours: lockcheck starts its own servers on free loopback ports.
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
for b in redis-server redis-cli redis-sentinel gcc java javac chromium mariadb-install-db etcd; do
  command -v "$b" >/dev/null 2>&1 || { echo "deps: $b still missing after apt-get install" >&2; exit 3; }
done
for f in /usr/share/java/zookeeper.jar /usr/share/java/slf4j-simple.jar /usr/share/java/curator-recipes.jar /usr/share/java/jackson-databind.jar; do
  [ -f "$f" ] || { echo "deps: $f still missing after apt-get install" >&2; exit 3; }
done
for m in redis kazoo; do
  /usr/bin/python3 -c "import $m" >/dev/null 2>&1 || { echo "deps: python module $m still missing after apt-get install" >&2; exit 3; }
done
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { echo "deps: postgresql initdb still missing after apt-get install" >&2; exit 3; }
# Debian's packages start their own postgresql and mariadb services; lockcheck
# never uses them (it runs its own servers in temporary directories).
