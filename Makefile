# lockcheck: the two commands a new user needs are `make run` and `make test`.
# Both install what is missing first (scripts/deps.sh, idempotent).
export PATH := $(PATH):/usr/local/go/bin
GO ?= go
BIN := bin/check
SEED ?= 1

.PHONY: deps build shim run test test-under-load vet fuzz bench acceptance acceptance-zk acceptance-redis acceptance-db scenarios clean

deps:
	@bash scripts/deps.sh

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

# The default scenario: a Redis SET NX PX lock whose holder is paused longer
# than its lease. Exit 1 (invalid: a double holder was found) is the expected
# finding, so only exit 3 (an error) fails make.
run: deps build
	@./$(BIN) run --lock redis-set-px --nemesis pause --time 20s --seed $(SEED); \
	code=$$?; if [ $$code -ge 3 ]; then exit $$code; fi; \
	echo "(exit $$code: 0 valid, 1 invalid, 2 unknown; see store/latest/results.json)"

vet:
	$(GO) vet ./...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime 10s ./history/
	$(GO) test -run '^$$' -fuzz FuzzParseCell -fuzztime 10s ./matrix/
	$(GO) test -run '^$$' -fuzz FuzzParseSeeds -fuzztime 10s ./matrix/
	$(GO) test -run '^$$' -fuzz FuzzJudge -fuzztime 10s ./conformance/

test: deps vet shim
	LOCKCHECK_CLOCKSHIM=$(CURDIR)/$(SHIM) $(GO) test -count=1 -timeout 12m ./...
	$(MAKE) --no-print-directory fuzz

# The test suite while two busy loops keep both cores loaded (bounded in
# time, stopped by pid when the tests end): the tests must hold on a busy
# machine (scripts/test-under-load.sh).
test-under-load: deps vet shim
	GO=$(GO) bash scripts/test-under-load.sh

# Benchmarks: checker scale on harness-shaped histories (10^4..10^6 ops,
# warm and cold, next to plain Porcupine; BENCH_MAX=1e7 for 10^7, which needs
# about 5 GiB) and harness overhead.
BENCH_MAX ?= 1e6
bench: deps build
	LOCKCHECK_BENCH_MAX=$(BENCH_MAX) $(GO) test -run '^$$' -bench 'BenchmarkCheck|BenchmarkPlainPorcupine' -benchtime 1x -count 3 -timeout 60m ./checker/
	./$(BIN) bench --rounds 3 --time 10s

# The verdict matrices of docs/verdicts.md: long, not part of make test.
# Each is a cells file run by `check matrix` (README, "check matrix"): it
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

# The Redis rows of shared/VERDICTS.md (none, pause, failover, clock jump,
# client clock skew).
acceptance-redis: deps build
	$(MATRIX) --cells scripts/redis-matrix.txt --junit store/acceptance-redis.xml --markdown store/acceptance-redis.md

# The database rows (PostgreSQL, MariaDB, unique-key row, optimistic
# version) under none, pause, partition, session-kill, kill and
# clock-client.
acceptance-db: deps build
	$(MATRIX) --cells scripts/db-matrix.txt --junit store/acceptance-db.xml --markdown store/acceptance-db.md

# Every named scenario, each with its own flags (scripts/scenarios.txt).
scenarios: deps build
	$(MATRIX) --cells scripts/scenarios.txt --junit store/scenarios.xml --markdown store/scenarios.md

clean:
	rm -rf bin store
