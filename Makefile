# PushBridge: the two set-up commands. Each installs what is missing (libjson-c-dev) itself.
SWIFT ?= swift
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
SUDO := $(shell if [ "$$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then echo sudo; fi)

.PHONY: deps test-deps core demo demo-serve demo-vendor-rest test docs build bench bench-serve bench-deliver bench-campaign bench-postgres bench-compare clean

## deps: install the system libraries PushBridge links (json-c, sqlite3, zlib) and pkg-config when missing.
## Found through pkg-config only (no fixed include paths): apt-get on Debian/Ubuntu, Homebrew on macOS.
deps:
	@if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists json-c sqlite3 zlib; then \
		if [ "$$(uname -s)" = Darwin ]; then \
			echo "Installing json-c, sqlite, zlib and pkg-config with Homebrew (missing)..."; \
			brew install json-c sqlite zlib pkg-config; \
		else \
			echo "Installing libjson-c-dev, libsqlite3-dev, zlib1g-dev and pkg-config (missing)..."; \
			$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq libjson-c-dev pkg-config libsqlite3-dev zlib1g-dev; \
		fi; \
	fi

## test-deps: what the tests use beyond the build, in a virtual environment of the project's own
## (.build/test-venv; `rm -rf .build/test-venv` removes it), never in the system Python: Tencent's UserSig
## generator (tls-sig-api-v2, for the Python drop-in example Examples/vendor-rest/drop_in.py) and Agora's
## AccessToken2 builder (agora-rest-client-python), when python3 is present. Tests only, never the product.
VENV := .build/test-venv
test-deps:
	@if command -v python3 >/dev/null 2>&1; then \
		if [ ! -x $(VENV)/bin/python3 ]; then \
			echo "Creating $(VENV) (a virtual environment for the tests' Python packages)..."; \
			mkdir -p .build && python3 -m venv $(VENV); \
		fi; \
		if ! $(VENV)/bin/python3 -c 'import TLSSigAPIv2, agora_rest.utils.AccessToken2' 2>/dev/null; then \
			echo "Installing tls-sig-api-v2 and agora-rest-client-python into $(VENV) (missing; tests only)..."; \
			$(VENV)/bin/python3 -m pip install -q --disable-pip-version-check tls-sig-api-v2 agora-rest-client-python; \
		fi; \
	fi

build: deps
	$(SWIFT) build

## demo: decide the bundled example and print the decision with its APNs payload
demo: build
	@.build/debug/pushbridge decide Examples/demo.json

## demo-serve: start `pushbridge serve` on 127.0.0.1:$(PORT), run Examples/service/demo.sh against it, stop it
PORT ?= 8080
demo-serve: build
	@PUSHBRIDGE=.build/debug/pushbridge PORT=$(PORT) Examples/service/demo.sh

## demo-vendor-rest: start `pushbridge serve`, run Examples/vendor-rest/curl.sh (Easemob and Tencent REST with curl) against it
demo-vendor-rest: build
	@PUSHBRIDGE=.build/debug/pushbridge PORT=$(PORT) Examples/vendor-rest/curl.sh

## core: the pure core alone, before any system library is installed (it needs neither json-c nor sqlite headers)
core:
	$(SWIFT) build --target PushBridgeCore

## test: build and run every test (all fixtures run through the conformance harness). The core is built
## first, before `deps` installs json-c: on a fresh machine that proves it needs no C library.
test: core deps test-deps
	@# Our own files build without a warning: Tests/Scripts/own-warnings.sh fails the run on any
	@# (dependencies' warnings aside).
	$(SWIFT) build --build-tests 2>&1 | tee .build/build-output.log
	@Tests/Scripts/own-warnings.sh .build/build-output.log
	@# Swift Testing announces each of the ~1,400 parameterised cases as it starts; the summary line of each
	@# parameterised test (and every failure, with its argument) stays.
	@# PostgreSQL store tests run against a throwaway cluster the script starts (installing postgresql
	@# when missing) and stops; without one they say SKIPPED, and under CI=true they fail.
	@# A CI log may be cut to its last lines: the failures are printed again at the end, after the summary.
	@# The tests' scratch folders (databases, service folders, logs) go under a
	@# temporary folder of the run's own (TMPDIR), removed when the run ends, whatever its outcome.
	@# The build above runs in the caller's environment and the tests skip building: a changed TMPDIR
	@# rebuilds most modules, a changed PATH the plugins, so another command after this one rebuilds nothing.
	@# Swift Testing alone: there are no XCTest tests (its empty pass would print "Executed 0 tests").
	@scratch="$$(mktemp -d /tmp/pushbridge-tests.XXXXXX)"; trap 'rm -rf "$$scratch"' EXIT; \
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" TMPDIR="$$scratch" Tests/Scripts/with-postgres.sh $(SWIFT) test --skip-build --disable-xctest 2>&1 | grep --line-buffered -v '^◇ Test case passing' | tee .build/test-output.log \
		|| { echo "== failures, repeated from above (whole log: .build/test-output.log) =="; \
			grep -E -A4 '✘|recorded an issue|error:|Fatal error|Crash' .build/test-output.log | grep -v '^✔' | tail -120; exit 1; }

## docs: every DocC catalog (Sources/*/*.docc: the articles in pushbridge's, one landing page per library) built
## with swift-docc-plugin, warnings as errors: a broken <doc:> or symbol link fails. Archives land in
## .build/plugins/Swift-DocC/outputs/.
DOC_TARGETS := pushbridge $(sort $(patsubst Sources/%/,%,$(dir $(wildcard Sources/PushBridge*/*.docc))))
docs: deps
	@mkdir -p .build
	@# The documentation build compiles the sources first: their warnings are checked here too (the
	@# test build after it is incremental and would not print them again).
	$(SWIFT) package --disable-sandbox generate-documentation --warnings-as-errors $(addprefix --target ,$(DOC_TARGETS)) 2>&1 | tee .build/docs-output.log
	@Tests/Scripts/own-warnings.sh .build/docs-output.log

## bench: release build, then throughput figures against baselines measured in the same run (last line: one JSON object)
bench: deps
	$(SWIFT) build -c release --product pushbridge-bench
	@.build/release/pushbridge-bench

## bench-serve: release build, then wrk against the service and a constant handler in the same run (installs wrk if missing)
bench-serve: deps
	@command -v wrk >/dev/null 2>&1 || { echo "Installing wrk (missing)..."; $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq wrk; }
	$(SWIFT) build -c release --product pushbridge-bench
	@.build/release/pushbridge-bench --serve

## bench-deliver: release build, then the service delivering a 100,000-member group into the mock APNs at 0 and 100 ms per answer, beside h2load and the HTTP/2 clients alone on the same mock (installs h2load if missing)
bench-deliver: deps
	@command -v h2load >/dev/null 2>&1 || { echo "Installing h2load (nghttp2-client, missing)..."; $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq nghttp2-client; }
	$(SWIFT) build -c release --product pushbridge-bench
	@.build/release/pushbridge-bench --deliver

## bench-campaign: release build, then Easemob's POST /push/task to every user of a 1,000,000-user app (one device each) delivered into the mock APNs at 100 ms per answer, beside h2load on the same mock; on SQLite, then on PostgreSQL (a throwaway cluster) with the ratio; targets: accepted < 100 ms, decided and queued ≤ 60 s, delivered ≥ 0.8 of h2load, peak memory ≤ 500 MB, a chat user's one-to-one p99 during the campaign ≤ 2× before it; each store's run followed at most 300 s, its figures then taken as they stand (USERS=… for a smaller app)
bench-campaign: deps
	@command -v h2load >/dev/null 2>&1 || { echo "Installing h2load (nghttp2-client, missing)..."; $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq nghttp2-client; }
	$(SWIFT) build -c release --product pushbridge-bench
	@Tests/Scripts/with-postgres.sh .build/release/pushbridge-bench --campaign --users $(or $(USERS),1000000)

## bench-postgres: release build, then one-to-one messages (wrk, 16 connections) on one SQLite node and on one and two PostgreSQL nodes for one app and eight apps (8 apps on SQLite too: a reference with no target), the 100,000-member fan-out beside SQLite, its targets (PostgreSQL one node ≥ 0.8 of SQLite; 8 apps on one node ≥ 0.75× one app; p99 ≤ 20 ms for 8 apps on one node, ≤ 30 ms on two; ≤ 1.5 statements a message at 8 apps; one app on two nodes ≥ 0.75× one node, ≥ 0.9× over 1,000 receivers; two nodes' CPU a message ≤ 1.1× one node's; warm fan-out ≤ 2× SQLite's; p99 ≤ 50 ms for one app), each met or NOT MET, and a scale model projected from the CPU a message, on a throwaway cluster
bench-postgres: deps
	@command -v wrk >/dev/null 2>&1 || { echo "Installing wrk (missing)..."; $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq wrk; }
	$(SWIFT) build -c release --product pushbridge-bench
	@Tests/Scripts/with-postgres.sh .build/release/pushbridge-bench --postgres

## bench-compare: REF=<version or commit> builds REF's bench in a worktree of its own (.build/bench-ref/) and this
## checkout's, runs them alternated (core, serve, deliver; three rounds; SECTIONS=serve ROUNDS=5 to change), and
## prints each figure side by side with its change, flagging (and exiting 1 on) a same-run ratio that fell by 10 % or more
bench-compare: deps
	@test -n "$(REF)" || { echo "make bench-compare: say what to compare with: REF=<version or commit> (say REF=0.36.1)"; exit 2; }
	@command -v wrk >/dev/null 2>&1 || { echo "Installing wrk (missing)..."; $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq wrk; }
	@command -v h2load >/dev/null 2>&1 || { echo "Installing h2load (nghttp2-client, missing)..."; $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq nghttp2-client; }
	@Tests/Scripts/bench-compare.sh "$(REF)"

clean:
	rm -rf .build
	git worktree prune
