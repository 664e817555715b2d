# PushBridge: the two set-up commands. Each installs what is missing (libjson-c-dev) itself.
SWIFT ?= swift
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
SUDO := $(shell if [ "$$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then echo sudo; fi)

.PHONY: deps core demo demo-serve test build bench bench-serve clean

## deps: install the system libraries PushBridge links (json-c, sqlite3) and pkg-config when missing.
## Found through pkg-config only (no fixed include paths): apt-get on Debian/Ubuntu, Homebrew on macOS.
deps:
	@if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists json-c sqlite3; then \
		if [ "$$(uname -s)" = Darwin ]; then \
			echo "Installing json-c, sqlite and pkg-config with Homebrew (missing)..."; \
			brew install json-c sqlite pkg-config; \
		else \
			echo "Installing libjson-c-dev, libsqlite3-dev and pkg-config (missing)..."; \
			$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq libjson-c-dev pkg-config libsqlite3-dev; \
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

## core: the pure core alone, before any system library is installed (it needs neither json-c nor sqlite headers)
core:
	$(SWIFT) build --target PushBridgeCore

## test: build and run every test (all fixtures run through the conformance harness). The core is built
## first, before `deps` installs json-c: on a fresh machine that proves it needs no C library.
test: core deps
	$(SWIFT) build --build-tests
	@# Swift Testing announces each of the ~1,400 parameterised cases as it starts; the summary line of each
	@# parameterised test (and every failure, with its argument) stays.
	$(SWIFT) test | grep -v '^◇ Test case passing'

## bench: release build, then throughput figures against baselines measured in the same run (last line: one JSON object)
bench: deps
	$(SWIFT) build -c release --product pushbridge-bench
	@.build/release/pushbridge-bench

## bench-serve: release build, then wrk against the service and a constant handler in the same run (installs wrk if missing)
bench-serve: deps
	@command -v wrk >/dev/null 2>&1 || { echo "Installing wrk (missing)..."; $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq wrk; }
	$(SWIFT) build -c release --product pushbridge-bench
	@.build/release/pushbridge-bench --serve

clean:
	rm -rf .build
