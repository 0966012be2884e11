#!/usr/bin/env bash
# compose-wait.sh waits until every container of a Compose project is
# healthy (or running, without a healthcheck): `docker compose up --wait`
# for Compose v1 (docker-compose), which has no --wait.
#
#   docker-compose --profile zookeeper up -d && scripts/compose-wait.sh [-p PROJECT] [-t SECONDS]
#
# PROJECT defaults to $COMPOSE_PROJECT_NAME, else the repository directory's
# name as Compose v1 makes it (lower case, letters and digits only). Exits 0
# when all are healthy, 1 when one exits or turns unhealthy (its last log
# lines are printed), 2 on timeout (default 120 s).
set -euo pipefail

cd "$(dirname "$0")/.."
project=${COMPOSE_PROJECT_NAME:-$(basename "$PWD" | tr A-Z a-z | tr -cd 'a-z0-9')}
timeout=120
while getopts 'p:t:' o; do
	case $o in
	p) project=$OPTARG ;;
	t) timeout=$OPTARG ;;
	*) echo "usage: scripts/compose-wait.sh [-p PROJECT] [-t SECONDS]" >&2; exit 3 ;;
	esac
done

deadline=$(($(date +%s) + timeout))
while :; do
	ids=$(docker ps -aq --filter "label=com.docker.compose.project=$project")
	if [ -z "$ids" ]; then
		echo "compose-wait: project $project has no containers" >&2
		exit 1
	fi
	waiting=()
	while read -r name status health; do
		st=$status
		[ "$status" != running ] || [ -z "$health" ] || st=$health
		case $st in
		healthy | running) ;;
		exited | dead | unhealthy)
			echo "compose-wait: ${name#/} is $st" >&2
			docker logs --tail 20 "${name#/}" >&2 || true
			exit 1
			;;
		*) waiting+=("${name#/}:$st") ;;
		esac
	done < <(docker inspect --format '{{.Name}} {{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{end}}' $ids)
	if [ ${#waiting[@]} -eq 0 ]; then
		echo "compose-wait: project $project healthy" >&2
		exit 0
	fi
	if [ "$(date +%s)" -ge "$deadline" ]; then
		echo "compose-wait: project $project not healthy within ${timeout}s: ${waiting[*]}" >&2
		exit 2
	fi
	sleep 0.5
done
