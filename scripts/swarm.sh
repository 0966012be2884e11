#!/usr/bin/env bash
# swarm.sh runs a sharded matrix as a Docker Swarm job on this machine's
# engine and merges it (make test-swarm; docs/scale.md): one
# `replicated-job` service of the cell image, one task per shard, each task
# `check matrix --shard I/N` with I from its task slot, every shard writing
# to one bind-mounted store; then `check matrix merge` of the shards on the
# host, which must find every cell x seed exactly once and nothing missing.
#
# It leaves the engine as it found it: a swarm it initialised it leaves
# (and removes the docker_gwbridge network that `swarm init` made, when
# there was none before); it removes its service, whose task containers go
# with it; it makes no volume (the store is a bind mount of a temporary
# directory). A swarm that was already active is used and left active.
# Afterwards it checks that the swarm state, the networks and the volumes
# are as before and that no container of its service is left.
#
#   scripts/swarm.sh        needs the cell image (make cell-image) and bin/check
#
# Variables: LOCKCHECK_CHECK_IMAGE (default lockcheck/check:dev), CHECK (the
# host's check binary, default bin/check), SHARDS (2), SEEDS (1..2),
# SWARM_TIMEOUT (seconds for the job, 900). Swarm listens on 127.0.0.1 only.
set -euo pipefail

cd "$(dirname "$0")/.."
IMAGE=${LOCKCHECK_CHECK_IMAGE:-lockcheck/check:dev}
CHECK=${CHECK:-bin/check}
SHARDS=${SHARDS:-2}
SEEDS=${SEEDS:-1..2}
TIMEOUT=${SWARM_TIMEOUT:-900}
NAME=lockcheck-swarm-$$

log() { printf 'swarm: %s\n' "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

command -v docker >/dev/null || { log "no docker CLI"; exit 3; }
docker image inspect "$IMAGE" >/dev/null 2>&1 || { log "no image $IMAGE: make cell-image"; exit 3; }
[ -x "$CHECK" ] || { log "no $CHECK: make build"; exit 3; }

work=$(mktemp -d /tmp/lockcheck-swarm.XXXXXX)
# Two cells x two seeds of a few seconds each: what is tested is the split
# and the merge on a real orchestrator, not the locks.
cat >"$work/cells.txt" <<'EOF'
redis-set-px     none S --lock redis-set-px --nemesis none --time 5s
redis-set-px-del none S --lock redis-set-px-del --nemesis none --time 5s
EOF

state_before=$(docker info --format '{{.Swarm.LocalNodeState}}')
networks_before=$(docker network ls -q | sort)
volumes_before=$(docker volume ls -q | sort)
created=0

cleanup() {
	docker service rm "$NAME" >/dev/null 2>&1 || true
	# The service's task containers go with it, a little later.
	for _ in $(seq 60); do
		[ -z "$(docker ps -aq --filter "label=com.docker.swarm.service.name=$NAME")" ] && break
		sleep 1
	done
	if [ "$created" = 1 ]; then
		docker swarm leave --force >/dev/null 2>&1 || true
		if ! grep -qx "$(docker network ls -q --filter name=^docker_gwbridge$)" <<<"$networks_before"; then
			docker network rm docker_gwbridge >/dev/null 2>&1 || true
		fi
	fi
}
trap cleanup EXIT

case "$state_before" in
inactive)
	log "docker swarm init (on 127.0.0.1; left again at the end)"
	docker swarm init --advertise-addr 127.0.0.1 --listen-addr 127.0.0.1:2377 >/dev/null
	created=1
	;;
active) log "using the active swarm (left active; only this run's service is removed)" ;;
*) log "swarm state $state_before: neither inactive nor active; not touching it"; exit 3 ;;
esac

# Task slots number a replicated job's tasks from 0, and the template
# renders slot 0 as the node's ID (Docker 20.10): a slot that is not a
# number is 0. Slot mod N + 1 is then a shard from 1 to N, one per task
# (and still one per task were slots numbered from 1).
start=$(date +%s)
docker service create --detach --quiet --no-resolve-image --name "$NAME" \
	--mode replicated-job --replicas "$SHARDS" --max-concurrent "$SHARDS" \
	--restart-condition none --init --label org.lockcheck.swarm=1 \
	--mount "type=bind,src=$work,dst=/work" \
	--env 'SLOT={{.Task.Slot}}' --env "SHARDS=$SHARDS" --env "SEEDS=$SEEDS" \
	--entrypoint /bin/sh "$IMAGE" -c \
	'case $SLOT in "" | *[!0-9]*) SLOT=0 ;; esac; exec check matrix --cells /work/cells.txt --seeds "$SEEDS" --shard $((SLOT % SHARDS + 1))/$SHARDS --jobs 1 --store /work/store >/work/shard-$SLOT.log 2>&1' >/dev/null
log "service $NAME: $SHARDS tasks of $IMAGE"

done_tasks=0
while :; do
	states=$(docker service ps "$NAME" --format '{{.CurrentState}}' 2>/dev/null || true)
	done_tasks=$(grep -c '^Complete' <<<"$states" || true)
	if [ "$done_tasks" -ge "$SHARDS" ]; then
		break
	fi
	if grep -qE '^(Failed|Rejected)' <<<"$states"; then
		docker service ps --no-trunc "$NAME" >&2 || true
		cat "$work"/shard-*.log >&2 2>/dev/null || true
		fail "a task failed (logs above; store in $work)"
	fi
	if [ $(($(date +%s) - start)) -gt "$TIMEOUT" ]; then
		docker service ps --no-trunc "$NAME" >&2 || true
		fail "the job did not complete within ${TIMEOUT}s (store in $work)"
	fi
	sleep 2
done
log "job complete: $done_tasks tasks in $(($(date +%s) - start)) s"
for f in "$work"/shard-*.log; do
	log "$(basename "$f"): $(tail -n 1 "$f")"
done

shopt -s nullglob
shards=("$work"/store/matrix/*/)
[ "${#shards[@]}" = "$SHARDS" ] || fail "${#shards[@]} stored shard matrices, want $SHARDS"
set +e
"$CHECK" matrix merge --store "$work/store" --json "$work/merged.json" --junit "$work/merged.xml" "${shards[@]}" >"$work/merge.out" 2>&1
code=$?
set -e
cat "$work/merge.out"
[ "$code" = 0 ] || fail "check matrix merge exited $code (store in $work)"
grep -q '^missing:' "$work/merge.out" && fail "merge reported missing runs"
# Every cell x seed exactly once: the merged matrix has 2 cells x the
# seeds, and the shards' matrices hold as many runs in all, each once.
# (merge refuses a run in two shards, and lists every run it lacks.)
nseeds=0
IFS=, read -ra parts <<<"$SEEDS"
for p in "${parts[@]}"; do
	if [[ $p == *..* ]]; then nseeds=$((nseeds + ${p#*..} - ${p%%..*} + 1)); else nseeds=$((nseeds + 1)); fi
done
want=$((2 * nseeds))
runs=$(grep -c '"verdict"' "$work/merged.json")
shard_runs=$(cat "${shards[@]/%/matrix.json}" | grep -c '"verdict"')
log "merged: $runs runs (want $want); the shards hold $shard_runs"
[ "$runs" = "$want" ] && [ "$shard_runs" = "$want" ] || fail "merged $runs runs, the shards hold $shard_runs, want $want"

cleanup
trap - EXIT
[ "$(docker info --format '{{.Swarm.LocalNodeState}}')" = "$state_before" ] || fail "swarm state is not $state_before again"
[ "$(docker network ls -q | sort)" = "$networks_before" ] || fail "networks differ from before: $(docker network ls)"
[ "$(docker volume ls -q | sort)" = "$volumes_before" ] || fail "volumes differ from before"
[ -z "$(docker ps -aq --filter "label=com.docker.swarm.service.name=$NAME")" ] || fail "containers of $NAME are left"
rm -rf "$work"
log "ok: $SHARDS shards as a swarm job, merged, $runs runs each once; the engine is as it was"
