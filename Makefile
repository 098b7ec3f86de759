# Inference Lab — build, test and run.
#
#   make deps     chromium (root on Debian, if missing) + npm ci (when the lock file changed)
#   make build    web/app.wasm + web/echarts.min.js + bin/inferlab
#   make run      build, then serve on http://127.0.0.1:8080
#   make test     deps + build, then go vet and go test (the e2e package drives headless Chromium)
#   make static   write the static site to dist/
#   make bench    benchmarks of the core and the lessons
#   make fuzz     run every Fuzz target (of FUZZPKGS, default ./...) for FUZZTIME (default 30s) each
#   make clean    remove build outputs (distclean also removes node_modules)

SHELL := /bin/bash
.DEFAULT_GOAL := build

GO       ?= go
NPM      ?= npm
CHROMIUM ?= /usr/bin/chromium
ADDR     ?= 127.0.0.1:8080
FUZZTIME ?= 30s
FUZZPKGS ?= ./...
# The e2e package starts Chromium several times; a cold wasm build alone can take a minute.
TEST_TIMEOUT ?= 30m
GOTESTFLAGS  ?=
# Extra -ldflags for the native binary (for example -X pkg.version=...).
LDFLAGS ?=

WASM      := web/app.wasm
SIMWASM   := web/sim.wasm
ECHARTS   := web/echarts.min.js
BIN       := bin/inferlab
# Stamp inside node_modules: deleting node_modules or changing the lock file triggers npm ci.
NPM_STAMP := node_modules/.inferlab-npm-ci

# Wall-clock start of this make invocation (printed by `make test`).
MAKE_START := $(shell date +%s)

.PHONY: all deps chromium wasm echarts native build run test vet static bench fuzz clean distclean

all: build

## deps: system and npm dependencies ------------------------------------------------------

deps: chromium $(NPM_STAMP)

# Installs Chromium only when it is missing, we are root, and this is Debian (apt-get).
# Otherwise it warns: the e2e tests skip without Chromium (and fail when CI=true).
chromium:
	@if [ -x "$(CHROMIUM)" ]; then \
		echo "chromium: $(CHROMIUM) present"; \
	elif [ "$$(id -u)" = 0 ] && [ -f /etc/debian_version ] && command -v apt-get >/dev/null 2>&1; then \
		echo "chromium: installing with apt-get"; \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium fonts-liberation; \
	else \
		echo "warning: $(CHROMIUM) is missing and cannot be installed here (need root on Debian);" \
		     "the e2e tests will be skipped (or fail when CI=true)" >&2; \
	fi

$(NPM_STAMP): package.json package-lock.json
	$(NPM) ci --no-audit --no-fund
	@touch $@

## build ------------------------------------------------------------------------------------

$(ECHARTS): $(NPM_STAMP)
	cp node_modules/echarts/dist/echarts.min.js $@

echarts: $(ECHARTS)

# Always handed to the go tool: its build cache makes an unchanged rebuild take about a second.
# app.wasm is the page (go-app); sim.wasm the simulation worker (wasm/sim, no UI).
wasm:
	GOOS=js GOARCH=wasm $(GO) build -trimpath -ldflags="-s -w" -o $(WASM) ./wasm
	GOOS=js GOARCH=wasm $(GO) build -trimpath -ldflags="-s -w" -o $(SIMWASM) ./wasm/sim

native:
	@mkdir -p bin
	$(GO) build -trimpath -ldflags="$(LDFLAGS)" -o $(BIN) ./cmd/inferlab

build: wasm echarts native

run: build
	$(BIN) serve --addr $(ADDR)

static: build
	$(BIN) static --out dist

## test -------------------------------------------------------------------------------------

vet:
	$(GO) vet ./...

test: deps build
	@rc=0; rm -f e2e/test-output/timing.log; \
	$(GO) vet ./... || rc=$$?; \
	if [ $$rc -eq 0 ]; then INFERLAB_E2E_RUN=$$(date +%s%N) $(GO) test -timeout $(TEST_TIMEOUT) $(GOTESTFLAGS) ./... || rc=$$?; fi; \
	cat e2e/test-output/timing.log 2>/dev/null || true; \
	echo "make test: $$(( $$(date +%s) - $(MAKE_START) ))s elapsed (exit $$rc)"; \
	exit $$rc

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./core/... ./lessons/...
	$(GO) run ./cmd/inferlab bench

# Lists the Fuzz targets of every package, then runs each for FUZZTIME.
fuzz:
	@set -euo pipefail; \
	targets=$$($(GO) test -vet=off -list '^Fuzz' $(FUZZPKGS) | awk '/^Fuzz/ { f[n++] = $$1 } /^ok/ { for (i = 0; i < n; i++) print $$2 " " f[i]; n = 0 }'); \
	if [ -z "$$targets" ]; then echo "fuzz: no Fuzz targets"; exit 0; fi; \
	while read -r pkg fn; do \
		echo "== fuzz $$pkg $$fn for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) "$$pkg"; \
	done <<< "$$targets"

## clean ------------------------------------------------------------------------------------

clean:
	rm -rf bin dist e2e/test-output $(WASM) $(WASM).gz $(WASM).br $(SIMWASM) $(SIMWASM).gz $(SIMWASM).br $(ECHARTS)

distclean: clean
	rm -rf node_modules
