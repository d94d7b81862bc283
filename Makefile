# Strata — the two commands of the README, and a few more.
#
#   make deps      install the Debian packages the build and the tests need, PostgreSQL included
#                  (as root; else prints the sudo command)
#   make build     configure (once) and build build/libstrata.so, build/strata (the command-line
#                  tool, docs/cli.md), the examples and the C tests
#   make test      build, then run every test: Swift tests, C tests, C tests under valgrind,
#                  C tests on PostgreSQL (label postgres: each in a throw-away cluster of
#                  scripts/postgres-test.sh; CTEST_ARGS=-LE postgres skips them),
#                  the migration crash test (label slow, 1-2 minutes: CTEST_ARGS=-LE slow skips it),
#                  a short run of each fuzz harness
#   make test-quick  build, then the Swift tests and the C tests only (no valgrind, crash test,
#                  fuzzing, benchmark or install checks): about 75 s once built, against
#                  about 20 minutes for make test from a clean clone
#   make memcheck  build, then run only the C tests under valgrind (ctest -L memcheck)
#   make asan      the C tests against libstrata built with AddressSanitizer (Swift and C) and
#                  UndefinedBehaviorSanitizer (C side: Swift has no UBSan on Linux) (ctest -L asan)
#   make fuzz      the libFuzzer harnesses of fuzz/, each run for FUZZ_SECONDS (default 60);
#                  FUZZ_HARNESSES="insert fetch" picks some; findings go to build/fuzz/artifacts/
#   make demo      build, then run the SampleTrips demo on a fresh store under build/demo/: a store
#                  of schema version 1 migrated to version 4 (DEMO_FROM=2 or 3 starts at that version);
#                  STRATA_DEMO_STORE=postgresql://… runs it on a PostgreSQL store instead (an empty
#                  schema: e.g. …?options=-csearch_path%3Dtrips_demo; the URI is not echoed)
#   make bench-migration  build, then time migrations of 1,000,000 trips against the same changes
#                  in hand-written SQL (benchmarks/migration/README.md; not part of make test)
#   make bench-history  build, then time one save of 100,000 inserts and one of 10,000 updates
#                  with history on and off, and SQLite alone (benchmarks/history/README.md;
#                  not part of make test)
#   make bench-open-floor  build, then what a fresh process pays to load a Swift library and
#                  libstrata beside the bench's open row (benchmarks/open-floor/README.md;
#                  not part of make test)
#   make bench     build, then each workload of issue 10 through strata.h and through hand-written
#                  SQLite C on 100,000 trips (BENCH_TRIPS), medians of REPEAT (5) runs, the table
#                  also in build/bench/results.md (WORKLOADS="insert prefetch" picks some), then
#                  the 1,000,000-trip migration benchmark (BENCH_MIGRATION=0 skips it)
#                  (benchmarks/bench/README.md; not part of make test)
#   make bench-smoke  the same checks on 1,000 trips, once (ctest runs it too: label bench)
#   make bench-postgres  build, then the same workloads on Strata's PostgreSQL store against
#                  hand-written libpq C on the same server, in a throw-away cluster of
#                  scripts/postgres-test.sh (BENCH_POSTGRES=<URI> uses that server instead), the
#                  table also in build/bench/results-postgres.md, then the cost of a NOTIFY per
#                  save (NOTIFY_SAVES of each kind, default 5000) (benchmarks/bench/README.md;
#                  not part of make test; ctest -R bench_postgres runs its smoke run)
#   make install   cmake --install build (PREFIX=/usr/local): lib/libstrata.so*, include/strata.h,
#                  bin/strata (the command-line tool, docs/cli.md), strata.pc, the CMake package, docs
#   make clean     remove build/ and SwiftPM's .build*/ folders
#
# Everything runs with 2 jobs (JOBS=2); CMake drives SwiftPM (see CMakeLists.txt).
# `make test` includes a short run of every fuzz harness (ctest -L fuzz, 8 s each); asan and fuzz
# share one instrumented build of the library (build/swift-sanitize, see cmake/Fuzz.cmake).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

BUILD_DIR ?= build
JOBS      ?= 2
PREFIX    ?= /usr/local
GENERATOR ?= Ninja
CMAKE     ?= cmake
CTEST     ?= ctest
CTEST_ARGS ?=
FUZZ_SECONDS ?= 60
FUZZ_HARNESSES ?=
DEMO_FROM ?= 1
BENCH_MIGRATION ?= 1
POSTGRES_TEST ?= scripts/postgres-test.sh
NOTIFY_SAVES ?= 5000

DEB_PACKAGES := cmake ninja-build pkg-config gcc g++ libsqlite3-dev libjson-c-dev valgrind sqlite3 time bsdutils \
                postgresql postgresql-contrib libpq5 libpq-dev
# The Python binding's test: the interpreter, and what an offline `pip install bindings/python` needs.
DEB_PACKAGES += python3 python3-pip python3-setuptools python3-wheel python3-venv

.PHONY: deps configure build test test-quick memcheck asan fuzz demo bench-migration bench-history bench-open-floor bench bench-smoke bench-postgres install clean

deps:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
	  dpkg -s "$$p" >/dev/null 2>&1 || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	echo "deps: missing Debian packages:$$missing"; \
	if [ "$$(id -u)" = 0 ]; then \
	  echo "+ apt-get update && apt-get install -y$$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update && apt-get install -y $$missing; \
	else \
	  echo "deps: run this (or run make as root), then try again:"; \
	  echo "  sudo apt-get update && sudo apt-get install -y$$missing"; \
	  exit 1; \
	fi
	@command -v swift >/dev/null 2>&1 || [ -x /opt/swift/usr/bin/swift ] || \
	  { echo "deps: swift not found: install Swift 6 (https://swift.org/install) and put it on PATH"; exit 1; }

$(BUILD_DIR)/CMakeCache.txt: | deps
	$(CMAKE) -S . -B $(BUILD_DIR) -G $(GENERATOR) -DCMAKE_BUILD_TYPE=Release

configure: deps $(BUILD_DIR)/CMakeCache.txt

build: deps $(BUILD_DIR)/CMakeCache.txt
	$(CMAKE) --build $(BUILD_DIR) -j $(JOBS)

test: build
	$(CTEST) --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) -LE asan $(CTEST_ARGS)

test-quick: build
	$(CTEST) --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) -LE 'asan|memcheck|slow|fuzz|bench|install' $(CTEST_ARGS)

memcheck: build
	$(CTEST) --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) -L memcheck $(CTEST_ARGS)

asan: configure
	$(CMAKE) --build $(BUILD_DIR) -j $(JOBS) --target strata_asan_tests
	$(CTEST) --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) -L asan $(CTEST_ARGS)

fuzz: configure
	$(CMAKE) --build $(BUILD_DIR) -j $(JOBS) --target strata_fuzzers
	scripts/run-fuzz.sh $(BUILD_DIR) $(FUZZ_SECONDS) $(FUZZ_HARNESSES)

demo: build
ifeq ($(strip $(STRATA_DEMO_STORE)),)
	@mkdir -p $(BUILD_DIR)/demo
	rm -rf $(BUILD_DIR)/demo/trips.store $(BUILD_DIR)/demo/trips.store-wal \
	       $(BUILD_DIR)/demo/trips.store-shm $(BUILD_DIR)/demo/trips.store.strata
	$(BUILD_DIR)/trips --from $(DEMO_FROM) $(BUILD_DIR)/demo/trips.store
else
	@$(BUILD_DIR)/trips --from $(DEMO_FROM) "$$STRATA_DEMO_STORE"
endif

bench-migration: build
	benchmarks/migration/run.sh $(BUILD_DIR)

bench-history: build
	benchmarks/history/run.sh $(BUILD_DIR)

bench-open-floor: build
	benchmarks/open-floor/run.sh $(BUILD_DIR)

bench: build
	@mkdir -p $(BUILD_DIR)/bench
	$(BUILD_DIR)/bench_driver | tee $(BUILD_DIR)/bench/results.md
	@if [ "$(BENCH_MIGRATION)" != 0 ]; then \
	  echo "+ benchmarks/migration/run.sh $(BUILD_DIR)"; \
	  env -u REPEAT benchmarks/migration/run.sh $(BUILD_DIR); \
	fi

bench-smoke: build
	$(BUILD_DIR)/bench_driver --trips 1000 --repeat 1 --work $(BUILD_DIR)/bench/smoke

# The driver and the NOTIFY measurement run on the server of BENCH_POSTGRES, else inside
# $(POSTGRES_TEST), which starts a throw-away cluster, exports STRATA_TEST_POSTGRES and stops it.
bench-postgres: build
	@test -x $(BUILD_DIR)/bench_raw_pg || { echo "bench-postgres: $(BUILD_DIR)/bench_raw_pg was not built:" \
	  "libpq was not found (Debian: libpq-dev), then reconfigure: cmake -S . -B $(BUILD_DIR)" >&2; exit 1; }
	@mkdir -p $(BUILD_DIR)/bench
	run='"$$0"/bench_driver --postgres "$${BENCH_POSTGRES:-$$STRATA_TEST_POSTGRES}" && echo &&'\
	' "$$0"/bench_notify_pg "$${BENCH_POSTGRES:-$$STRATA_TEST_POSTGRES}" $(NOTIFY_SAVES)'; \
	if [ -n "$${BENCH_POSTGRES:-}" ]; then sh -c "$$run" $(BUILD_DIR); \
	else bash $(POSTGRES_TEST) sh -c "$$run" $(BUILD_DIR); fi | tee $(BUILD_DIR)/bench/results-postgres.md

install: build
	$(CMAKE) --install $(BUILD_DIR) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD_DIR) .build*
