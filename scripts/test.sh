#!/usr/bin/env bash
# test.sh is `make test`: the whole suite, the container tests included
# wherever a Docker engine answers, images built or cached on the way.
#
# A cold build of the images (a debootstrap and two Dockerfiles) takes
# minutes, so it runs in the background, in a process group of its own,
# while the rest of the suite runs; the container tests (every test with
# "Docker" in its name, internal/dockertest) skip in that run as "deferred"
# and run in a phase of their own as soon as the images are ready. An image
# that is already built and unchanged is reused in seconds. Where no engine
# answers, the container tests skip and say why, and nothing is built.
#
#   GO        the go command (default go)
#   TIMEOUT   go test -timeout of the main run (default 20m)
#
# Exit: the first non-zero of the main run and the Docker phase (an image
# build that fails is a failure: the engine answered). The background build
# is stopped by its process group when this script ends, however it ends.
set -u
cd "$(dirname "$0")/.."
GO=${GO:-go}
export LOCKCHECK_CLOCKSHIM="$PWD/bin/libclockshim.so"
PKGS=(./runner/ ./compose/ ./containers/ ./matrix/)
IMAGES=(redis zookeeper)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lockcheck-test.XXXXXX")
bg=""
stop() {
	if [ -n "$bg" ]; then
		kill -TERM -- "-$bg" 2>/dev/null
		wait "$bg" 2>/dev/null
		bg=""
	fi
	rm -rf "$tmp"
}
trap stop EXIT
trap 'exit 130' INT TERM

# docker_phase builds the images, then runs the container tests; its output
# goes to $tmp/docker.log and its exit code to $tmp/docker.code.
docker_phase() {
	local start=$SECONDS code
	unset LOCKCHECK_DOCKER_TESTS
	if ! bash scripts/images.sh build "${IMAGES[@]}" >"$tmp/images.log" 2>&1; then
		echo "test: the container images could not be built (scripts/images.sh build ${IMAGES[*]}):"
		tail -n 20 "$tmp/images.log"
		echo 3 >"$tmp/docker.code"
		return
	fi
	echo "test: images ${IMAGES[*]} ready in $((SECONDS - start)) s; running the container tests"
	"$GO" test -count=1 -timeout 10m -run Docker "${PKGS[@]}"
	code=$?
	echo "$code" >"$tmp/docker.code"
}

docker=0
if docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
	docker=1
	export -f docker_phase
	export GO tmp
	IMAGES="${IMAGES[*]}" PKGS="${PKGS[*]}" setsid bash -c '
		IMAGES=($IMAGES) PKGS=($PKGS)
		docker_phase >"$tmp/docker.log" 2>&1' &
	bg=$!
	echo "test: building the container images in the background (log: make test prints it at the end)"
	export LOCKCHECK_DOCKER_TESTS=deferred
else
	echo "test: no Docker engine answers: the container tests skip"
fi

"$GO" test -count=1 -timeout "${TIMEOUT:-20m}" ./...
code=$?

if [ "$docker" = 1 ]; then
	echo "test: waiting for the container images and tests"
	wait "$bg"
	bg=""
	cat "$tmp/docker.log"
	dcode=$(cat "$tmp/docker.code" 2>/dev/null || echo 3)
	if [ "$code" = 0 ] && [ "$dcode" != 0 ]; then
		code=$dcode
	fi
fi
exit "$code"
