#!/usr/bin/env bash
# deps.sh [GROUP...] installs what lockcheck needs from Debian's packages,
# and only what is missing. With no group it installs what every test
# needs (`make test`); with groups, only theirs (`make run` asks for redis).
# It is idempotent: a second run with everything present does nothing and
# exits 0.
#
#   redis      redis-server, redis-cli, redis-sentinel: Redis lock nodes, the
#              storage node of every run, Sentinel; gcc for the clock shim
#   zookeeper  java, zookeeper.jar, slf4j: ZooKeeper 3.8 ensembles
#   python     python3-redis, python3-kazoo, python3-psycopg2: the redis-py-lock
#              and kazoo-lock workers (Debian's /usr/bin/python3,
#              workers/python/) and the Python kit's examples (kit/python/)
#   curator    libcurator-recipes-java, jackson, javac: the curator-mutex
#              worker (workers/java/, compiled on first use); the Java kit's
#              examples (kit/java/; libpostgresql-jdbc-java for PostgreSQL)
#   postgres   postgresql-15: PostgreSQL lock designs (initdb, postgres)
#   pgbouncer  pgbouncer: PostgreSQL through PgBouncer's pools
#   mariadb    mariadb-server: MariaDB lock designs (mariadbd, mariadb-install-db)
#   etcd       etcd-server: etcd clusters (the etcd-mutex designs); strace: the
#              stall-disk nemesis
#   nats       nats-server: NATS JetStream servers (the nats-kv designs)
#   browser    chromium: the report's and the course's browser tests
#   lint       shellcheck: the deploy files' scripts (make test)
#
# deps.sh --name PACKAGE prints the name this distribution gives Debian's
# PACKAGE, as apt-cache knows it now, and installs nothing: Ubuntu ships
# PostgreSQL under its major version's metapackage (postgresql) and
# Chromium as chromium-browser.
set -euo pipefail

# distro_name prints this distribution's name for Debian's package $1.
distro_name() {
  case "$1" in
  postgresql-15) if apt-cache show postgresql-15 >/dev/null 2>&1; then echo postgresql-15; else echo postgresql; fi ;;
  chromium) if apt-cache show chromium >/dev/null 2>&1; then echo chromium; else echo chromium-browser; fi ;;
  *) echo "$1" ;;
  esac
}
if [ "${1:-}" = --name ]; then
  [ $# -eq 2 ] || { echo "deps: --name takes one package" >&2; exit 3; }
  distro_name "$2"
  exit 0
fi

groups=(redis zookeeper python curator postgres pgbouncer mariadb etcd nats browser lint)
if [ $# -gt 0 ]; then
  for g in "$@"; do
    case " ${groups[*]} " in
      *" $g "*) ;;
      *) echo "deps: unknown group $g (groups: ${groups[*]})" >&2; exit 3 ;;
    esac
  done
  groups=("$@")
fi
want() { case " ${groups[*]} " in *" $1 "*) return 0 ;; esac; return 1; }

# missing lists, one a line, the packages of the wanted groups whose
# programs or files are not here.
missing() {
  if want redis; then
    command -v redis-server >/dev/null 2>&1 || echo redis-server
    command -v redis-cli >/dev/null 2>&1 || echo redis-tools
    command -v redis-sentinel >/dev/null 2>&1 || echo redis-sentinel
    command -v gcc >/dev/null 2>&1 || echo gcc libc6-dev
  fi
  if want zookeeper; then
    command -v java >/dev/null 2>&1 || echo default-jre-headless
    [ -f /usr/share/java/zookeeper.jar ] || echo zookeeper
    [ -f /usr/share/java/slf4j-simple.jar ] || echo libslf4j-java
  fi
  if want python; then
    [ -x /usr/bin/python3 ] || echo python3
    /usr/bin/python3 -c 'import redis' >/dev/null 2>&1 || echo python3-redis
    /usr/bin/python3 -c 'import kazoo' >/dev/null 2>&1 || echo python3-kazoo
    /usr/bin/python3 -c 'import psycopg2' >/dev/null 2>&1 || echo python3-psycopg2
  fi
  if want curator; then
    [ -f /usr/share/java/curator-recipes.jar ] || echo libcurator-recipes-java
    [ -f /usr/share/java/jackson-databind.jar ] || echo libjackson2-databind-java
    command -v javac >/dev/null 2>&1 || echo default-jdk-headless
    [ -f /usr/share/java/postgresql.jar ] || echo libpostgresql-jdbc-java
  fi
  if want postgres; then
    ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || echo postgresql-15
  fi
  if want pgbouncer; then
    command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || echo pgbouncer
  fi
  if want mariadb; then
    command -v mariadb-install-db >/dev/null 2>&1 || echo mariadb-server
  fi
  if want etcd; then
    command -v etcd >/dev/null 2>&1 || echo etcd-server
    command -v strace >/dev/null 2>&1 || echo strace
  fi
  if want nats; then
    command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || echo nats-server
  fi
  if want browser; then
    command -v chromium >/dev/null 2>&1 || echo chromium
  fi
  if want lint; then
    command -v shellcheck >/dev/null 2>&1 || echo shellcheck
  fi
  return 0
}

read -r -a need <<<"$(missing | tr '\n' ' ')"
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
# ours: lockcheck starts its own servers on free loopback ports. Debian's
# packages start their own postgresql, mariadb and pgbouncer services;
# lockcheck never uses them (it runs its own servers in temporary
# directories).
# Debian's names; Ubuntu ships some under others: PostgreSQL under its own
# major version (any works: lockcheck finds /usr/lib/postgresql/*/bin), and
# Chromium as chromium-browser.
for i in "${!need[@]}"; do
  need[i]=$(distro_name "${need[$i]}")
done
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
read -r -a still <<<"$(missing | tr '\n' ' ')"
if [ ${#still[@]} -gt 0 ]; then
  echo "deps: ${still[*]} still missing after apt-get install" >&2
  exit 3
fi
