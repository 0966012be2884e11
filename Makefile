# lockcheck: the two commands a new user needs are `make run` and `make test`.
# Both install what is missing first (scripts/deps.sh, idempotent).
export PATH := $(PATH):/usr/local/go/bin
GO ?= go
BIN := bin/check
SEED ?= 1

.PHONY: deps deps-run build shim run test test-under-load vet fuzz mutation bench acceptance acceptance-zk acceptance-redis acceptance-db acceptance-etcd acceptance-redis-cluster acceptance-redis-zk incident-matrix windows-matrix hunt scenarios clean

deps:
	@bash scripts/deps.sh

# What the default scenario needs, and no more: Redis (and gcc for the
# clock shim the build makes).
deps-run:
	@bash scripts/deps.sh redis

build: shim
	$(GO) build -o $(BIN) ./cmd/check

# The clock shim (LD_PRELOAD) that moves a lock node's wall clock for the
# clock nemesis. The clusters package also compiles its embedded copy on
# demand, so `go test ./...` works without make.
SHIM := bin/libclockshim.so
shim: $(SHIM)

$(SHIM): clusters/clockshim/clockshim.c
	@mkdir -p bin
	gcc -O2 -Wall -shared -fPIC -o $@ $<

# Container images of the lock services, built with no registry: a Debian
# bookworm base from debootstrap, then docker/<service>/Dockerfile on it
# (scripts/images.sh, docs/docker.md). Cached: a second run takes seconds.
# IMAGES="redis zookeeper" builds only those. Where `docker compose` (v2)
# is missing, it is built from the Go module proxy and installed as the
# Docker CLI plugin (scripts/compose-plugin.sh), so that
# `docker compose --profile redis up -d --wait` works.
.PHONY: images
IMAGES ?=
images: shim
	bash scripts/images.sh build $(IMAGES)
	GO=$(GO) bash scripts/compose-plugin.sh

# The matrix cell image lockcheck/check:dev: this checkout's check binary on
# the zookeeper image, for `check matrix --docker-host` (docs/scale.md).
.PHONY: cell-image
cell-image: shim
	bash scripts/images.sh build zookeeper check

# The container tests alone (every test with Docker in its name), with their
# images built first (cached after the first time). make test runs them too,
# building the images in the background while the rest of the suite runs
# (scripts/test.sh).
.PHONY: test-docker
test-docker: shim
	GO=$(GO) bash scripts/test.sh docker redis zookeeper check

# A sharded matrix (2 cells x 2 seeds) as a Docker Swarm replicated job on
# this machine's engine, merged with check matrix merge; it leaves the engine
# as it found it (scripts/swarm.sh, docs/scale.md). Not part of make test.
.PHONY: test-swarm
test-swarm: build cell-image
	bash scripts/swarm.sh

# The default scenario: a Redis SET NX PX lock whose holder is paused longer
# than its lease. Exit 1 (invalid: a double holder was found) is the expected
# finding, so only exit 3 (an error) fails make.
run: deps-run build
	@./$(BIN) run --lock redis-set-px --nemesis pause --time 20s --seed $(SEED); \
	code=$$?; if [ $$code -ge 3 ]; then exit $$code; fi; \
	echo "(exit $$code: 0 valid, 1 invalid, 2 unknown; see store/latest/results.json)"

vet:
	$(GO) vet ./...

# Each fuzz target runs a fixed number of inputs, not a fixed time: with a
# duration, Go 1.26's fuzz coordinator can report a spurious "context
# deadline exceeded" failure when the deadline fires while a starved worker
# is mid-input (golang/go#75804, fixed in Go 1.27). A count has no deadline
# to race; a busy machine only makes it slower. FUZZN overrides the count.
FUZZN ?= 50000x
# The schedule parsers' fuzzers run 20000 inputs each (about 6 s apiece)
# to keep make test within its 15 minutes; FUZZN_SCHEDULE=200000x for a
# longer search.
FUZZN_SCHEDULE ?= 20000x
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZN) ./history/
	$(GO) test -run '^$$' -fuzz '^FuzzValidate$$' -fuzztime $(FUZZN) ./history/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeSidecar$$' -fuzztime $(FUZZN) ./history/
	$(GO) test -run '^$$' -fuzz '^FuzzParseCell$$' -fuzztime $(FUZZN) ./matrix/
	$(GO) test -run '^$$' -fuzz '^FuzzParseSeeds$$' -fuzztime $(FUZZN) ./matrix/
	$(GO) test -run '^$$' -fuzz '^FuzzJudge$$' -fuzztime $(FUZZN) ./conformance/
	$(GO) test -run '^$$' -fuzz '^FuzzParseFault$$' -fuzztime $(FUZZN_SCHEDULE) ./schedule/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeSchedule$$' -fuzztime $(FUZZN_SCHEDULE) ./schedule/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZN_SCHEDULE) ./topofile/

# scripts/test.sh runs the fuzz targets (make fuzz) beside the suite.
test: deps vet shim
	GO=$(GO) bash scripts/test.sh

# Mutation testing of the checkers (docs/testing.md): gremlins mutates
# checker/ and history/ one change at a time and runs each package's tests
# against every mutant; the target fails when either package's efficacy
# (killed / (killed + lived)) or mutant coverage is not above
# MUTATION_EFFICACY / MUTATION_MCOVER percent (90). Long (over an hour on 2
# busy cores), so not part of make test. The thresholds go to gremlins in a
# config file: v0.6.0 reads its --threshold-* flags as strings and ignores
# them. One worker and a generous timeout coefficient: under load, a
# mutant that times out counts as neither killed nor lived; GOFLAGS=-count=1
# keeps the coverage run, whose time the timeout is a multiple of, out of
# the test cache. MUTATION_DIFF=<ref> mutates only the lines changed since
# ref: gremlins runs from the package's own directory, and git diff is told
# (through GIT_CONFIG_*) to name files relative to it (diff.relative), as
# gremlins names the mutants, and to keep no context lines (diff.context=0),
# so that gremlins' changed ranges are exact; a package with no changed
# non-test file is skipped (gremlins takes an empty diff to mean that
# everything changed), and one whose changed lines hold no mutant (new
# struct fields only) passes.
GREMLINS ?= $(or $(shell command -v gremlins 2>/dev/null),$(shell $(GO) env GOPATH 2>/dev/null)/bin/gremlins)
GREMLINS_VERSION ?= v0.6.0
MUTATION_EFFICACY ?= 90
MUTATION_MCOVER ?= 90
MUTATION_FLAGS ?= --workers 1 --timeout-coefficient 20
MUTATION_DIFF ?=
MUTATION_ENV = GOFLAGS=-count=1 GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=diff.relative GIT_CONFIG_VALUE_0=true \
	GIT_CONFIG_KEY_1=diff.context GIT_CONFIG_VALUE_1=0
MUTATE = $(if $(MUTATION_DIFF),if git diff --quiet --merge-base $(MUTATION_DIFF) -- . ':(exclude)*_test.go'; \
	then echo "no change since $(MUTATION_DIFF)"; else out=$$(mktemp); ,)$(MUTATION_ENV) $(GREMLINS) unleash --config "$$cfg" \
	$(MUTATION_FLAGS) $(if $(MUTATION_DIFF),--diff $(MUTATION_DIFF)) "$$PWD"$(if $(MUTATION_DIFF), >"$$out" 2>&1; r=$$?; cat "$$out"; \
	if [ $$r -ne 0 ] && grep -q 'Killed: 0. Lived: 0. Not covered: 0' "$$out"; then echo "no mutant in the changed lines"; r=0; fi; \
	rm -f "$$out"; exit $$r; fi)
mutation:
	@test -x $(GREMLINS) || $(GO) install github.com/go-gremlins/gremlins/cmd/gremlins@$(GREMLINS_VERSION)
	@cfg=$$(mktemp "$${TMPDIR:-/tmp}/gremlins.XXXXXX.yaml"); trap 'rm -f "$$cfg"' EXIT; \
	printf 'unleash:\n  threshold:\n    efficacy: %s\n    mutant-coverage: %s\n' $(MUTATION_EFFICACY) $(MUTATION_MCOVER) >"$$cfg"; \
	rc=0; \
	echo "== history/"; (cd history && $(MUTATE)) || rc=$$?; \
	echo "== checker/"; (cd checker && $(MUTATE)) || rc=$$?; \
	exit $$rc

# The test suite while two busy loops keep both cores loaded (bounded in
# time, stopped by pid when the tests end): the tests must hold on a busy
# machine (scripts/test-under-load.sh).
test-under-load: deps vet shim
	GO=$(GO) bash scripts/test-under-load.sh

# Benchmarks (docs/performance.md): checker scale on harness-shaped
# histories (10^4..10^6 ops, warm and cold, next to plain Porcupine;
# BENCH_MAX=1e7 for 10^7, which needs about 6 GiB), history decoding, and
# harness overhead at think 0 and 1 ms.
BENCH_MAX ?= 1e6
bench: deps build
	LOCKCHECK_BENCH_MAX=$(BENCH_MAX) $(GO) test -run '^$$' -bench 'BenchmarkCheck|BenchmarkPlainPorcupine' -benchtime 1x -count 3 -timeout 60m ./checker/
	$(GO) test -run '^$$' -bench Decode -count 3 ./history/
	$(GO) test -run '^$$' -bench TriggerLate -benchtime 1x -count 3 ./runner/
	./$(BIN) bench --rounds 3 --time 10s --think 0
	./$(BIN) bench --rounds 3 --time 10s

# The verdict matrices of docs/verdicts.md: long, not part of make test.
# Each is a cells file run by `check matrix` (docs/matrix.md): it
# prints the table, stores the matrix under store/matrix/ (browse it with
# `bin/check serve`), writes JUnit to store/<target>.xml and exits 1 when a
# cell misses its expectation. SEEDS and JOBS override the defaults.
SEEDS ?= 1..10
JOBS ?= 2
MATRIX = ./$(BIN) matrix --seeds $(SEEDS) --jobs $(JOBS)

acceptance: deps build
	$(MATRIX) --cells scripts/acceptance.txt --junit store/acceptance.xml

acceptance-zk: deps build
	$(MATRIX) --cells scripts/acceptance-zk.txt --junit store/acceptance-zk.xml

# The Redis rows of docs/verdicts.md's expected table (none, pause,
# failover, clock jump, client clock skew).
acceptance-redis: deps build
	$(MATRIX) --cells scripts/redis-matrix.txt --junit store/acceptance-redis.xml --markdown store/acceptance-redis.md

# The database rows (PostgreSQL, MariaDB, unique-key row, optimistic
# version) under none, pause, partition, session-kill, kill and
# clock-client.
acceptance-db: deps build
	$(MATRIX) --cells scripts/db-matrix.txt --junit store/acceptance-db.xml --markdown store/acceptance-db.md

# The hunt (docs/findings.md): every wrapped Go lock library in its safe
# configuration under the incident faults bound to its lock events.
hunt: deps build
	$(MATRIX) --cells scripts/hunt.txt --markdown store/hunt.md

# The etcd rows (etcd-mutex unfenced, fenced and guarded) under none, pause,
# partition, leader kill and leader isolation (docs/verdicts.md: seeds
# 1..10, JOBS=2).
acceptance-etcd: deps build
	$(MATRIX) --cells scripts/etcd-matrix.txt --junit store/acceptance-etcd.xml --markdown store/acceptance-etcd.md

# The Redis Cluster row (none, pause, partition, failover; docs/verdicts.md
# was measured with SEEDS=1..10 JOBS=1).
acceptance-redis-cluster: deps build
	$(MATRIX) --cells scripts/redis-cluster-matrix.txt --junit store/acceptance-redis-cluster.xml --markdown store/acceptance-redis-cluster.md

# The seed's combined Redis + ZooKeeper lock (redis-zk) under none, pause,
# partition, Redis node kill and ZooKeeper leader kill.
acceptance-redis-zk: deps build
	$(MATRIX) --cells scripts/redis-zk-matrix.txt --junit store/acceptance-redis-zk.xml --markdown store/acceptance-redis-zk.md

# Every design with an observer under pause, partition and session-kill:
# the lost-lock windows of docs/verdicts.md (scripts/windows-matrix.txt,
# 61 cells; about two hours at SEEDS=1..10 on 2 cores).
windows-matrix: deps build
	$(MATRIX) --cells scripts/windows-matrix.txt --junit store/windows-matrix.xml --markdown store/windows-matrix.md

# Every incident fault (latency, reply-loss, starve, clock-strobe,
# restart-lose, partition shapes, ...) against every design it applies to,
# expectations from the catalog (scripts/incident-matrix.txt, 340 cells;
# about 47 minutes a seed at four runs at a time on 2 cores, so about
# eight hours at SEEDS=1..10: split it with --docker-host, docs/scale.md).
incident-matrix: deps build
	$(MATRIX) --cells scripts/incident-matrix.txt --junit store/incident-matrix.xml --markdown store/incident-matrix.md

# Every named scenario, each with its own flags (scripts/scenarios.txt).
scenarios: deps build
	$(MATRIX) --cells scripts/scenarios.txt --junit store/scenarios.xml --markdown store/scenarios.md

clean:
	rm -rf bin store
