#!/usr/bin/env bash
# test.sh is `make test`: the whole suite, the container tests included
# wherever a Docker engine answers, images built or cached on the way.
#
#   scripts/test.sh                   the whole suite (make test)
#   scripts/test.sh docker [IMAGE...] build the images (default: redis
#                                     zookeeper), then run the container
#                                     tests alone (make test-docker)
#
# A cold build of the images (a debootstrap and two Dockerfiles) takes
# minutes, so the whole suite runs the docker phase in the background, in a
# process group of its own, while the rest of the suite runs; the container
# tests (every test with "Docker" in its name, internal/dockertest) skip in
# that run as "deferred". An image that is already built and unchanged is
# reused in seconds. Where no engine answers, the container tests skip and
# say why, and nothing is built.
#
# The fuzz targets (make fuzz: a fixed number of inputs each) run beside the
# suite too, in a process group of their own at the lowest priority (nice
# 19): most of their time is building instrumented test binaries, which
# then takes the processor time the suite's real-server tests leave idle
# while they wait on their servers, instead of minutes after the suite.
#
#   GO        the go command (default go)
#   TIMEOUT   go test -timeout of the main run (default 20m)
#
# Exit: the first non-zero of the main run, the fuzz targets and the docker
# phase (an image build that fails is a failure: the engine answered). The
# background phases are stopped by their process groups when this script
# ends, however it ends.
set -u
cd "$(dirname "$0")/.."
GO=${GO:-go}
export LOCKCHECK_CLOCKSHIM="$PWD/bin/libclockshim.so"

# docker_phase builds the images, then runs the container tests.
docker_phase() {
	local images=("$@") start=$SECONDS
	[ ${#images[@]} -gt 0 ] || images=(redis zookeeper)
	unset LOCKCHECK_DOCKER_TESTS
	log=$(mktemp "${TMPDIR:-/tmp}/lockcheck-images.XXXXXX")
	trap 'rm -f "$log"' EXIT
	trap 'exit 143' INT TERM
	if ! bash scripts/images.sh build "${images[@]}" >"$log" 2>&1; then
		echo "test: the container images could not be built (scripts/images.sh build ${images[*]}):"
		tail -n 20 "$log"
		return 3
	fi
	echo "test: images ${images[*]} ready in $((SECONDS - start)) s; running the container tests"
	"$GO" test -count=1 -timeout 10m -run Docker ./runner/ ./containers/ ./matrix/
}

if [ "${1:-}" = docker ]; then
	shift
	docker_phase "$@"
	exit $?
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lockcheck-test.XXXXXX")
bg=""
fz=""
stop() {
	for p in "$bg" "$fz"; do
		if [ -n "$p" ]; then
			kill -TERM -- "-$p" 2>/dev/null
			wait "$p" 2>/dev/null
		fi
	done
	bg=""
	fz=""
	rm -rf "$tmp"
}
trap stop EXIT
trap 'exit 130' INT TERM

if docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
	# setsid: the phase and everything it starts form one process group.
	setsid bash scripts/test.sh docker >"$tmp/docker.log" 2>&1 &
	bg=$!
	echo "test: building the container images in the background (log: make test prints it at the end)"
	export LOCKCHECK_DOCKER_TESTS=deferred
else
	echo "test: no Docker engine answers: the container tests skip"
fi

setsid nice -n 19 make --no-print-directory fuzz GO="$GO" >"$tmp/fuzz.log" 2>&1 &
fz=$!
echo "test: running the fuzz targets beside the suite, at nice 19 (make fuzz; its log is printed at the end)"

# The longest packages first: go test runs packages in the order given
# (two at a time on two cores), so the runner's ten minutes start at once
# instead of after every package before it in ./...'s order.
"$GO" test -count=1 -timeout "${TIMEOUT:-20m}" ./runner/ ./conformance/ ./kit/ ./...
code=$?

echo "test: waiting for the fuzz targets"
wait "$fz"
fcode=$?
fz=""
cat "$tmp/fuzz.log"
if [ "$code" = 0 ]; then
	code=$fcode
fi

if [ -n "$bg" ]; then
	echo "test: waiting for the container images and tests"
	wait "$bg"
	dcode=$?
	bg=""
	cat "$tmp/docker.log"
	if [ "$code" = 0 ]; then
		code=$dcode
	fi
fi
exit "$code"
