# lockcheck: the two commands a new user needs are `make run` and `make test`.
# Both install what is missing first (scripts/deps.sh, idempotent).
export PATH := $(PATH):/usr/local/go/bin
GO ?= go
BIN := bin/check
SEED ?= 1

.PHONY: deps build shim run test vet fuzz bench acceptance acceptance-zk acceptance-redis acceptance-db scenarios clean

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

test: deps vet shim
	LOCKCHECK_CLOCKSHIM=$(CURDIR)/$(SHIM) $(GO) test -count=1 -timeout 12m ./...
	$(MAKE) --no-print-directory fuzz

# Benchmarks: checker scale (10^4..10^6 ops) and harness overhead.
bench: deps build
	$(GO) test -run '^$$' -bench BenchmarkDefault -benchtime 1x -count 3 -timeout 30m ./checker/
	./$(BIN) bench --rounds 3 --time 10s

# The acceptance matrix of docs/verdicts.md: long, not part of make test.
acceptance: deps build
	bash scripts/acceptance.sh

acceptance-zk: deps build
	bash scripts/acceptance-zk.sh

# The Redis rows of shared/VERDICTS.md (none, pause, failover, clock jump,
# client clock skew), seeds 1..10: long, see docs/verdicts.md.
acceptance-redis: deps build
	bash scripts/matrix.sh scripts/redis-matrix.txt

# The database rows (PostgreSQL, MariaDB, unique-key row, optimistic
# version) under none, pause, partition, session-kill, kill and
# clock-client, seeds 1..10: long, see docs/verdicts.md.
acceptance-db: deps build
	bash scripts/matrix.sh scripts/db-matrix.txt

# Every named scenario, seeds 1..10 (scripts/scenarios.sh).
scenarios: deps build
	bash scripts/scenarios.sh

clean:
	rm -rf bin store
