# Inference Lab — build, test and run.
#
#   make deps      chromium (root on Debian, if missing) + npm ci (when the lock file changed)
#                  + staticcheck $(STATICCHECK_VERSION) (go install, when missing or another version)
#   make build     web/app.wasm, web/sim.wasm (+ .br/.gz beside each) + web/echarts.min.js + bin/inferlab
#   make run       build, then serve on http://$(ADDR) (another port: make run ADDR=127.0.0.1:8081)
#   make test      deps + build, then the checks (make lint), the JavaScript unit tests
#                  (make test-js) and go test (the e2e package drives headless Chromium)
#   make lint      only the checks: go vet, staticcheck, gofmt -l, go mod tidy -diff, ESLint (lint-js)
#   make test-js   the unit tests of web/'s JavaScript (webtest/, Node's own test runner)
#   make static    write the static site to dist/
#   make bench     benchmarks of the core and the lessons
#   make bench-wasm  the core and garage scenarios in WebAssembly (Node.js) and natively, interleaved:
#                  medians and ratios (BENCH_ONLY, BENCH_ROUNDS, BENCH_RUNS, BENCH_WARMUP, BENCH_WARMUP_MS)
#   make bench-corners  every lesson's heaviest allowed settings and the heaviest accepted trace,
#                  each in its own process: wall time, CPU time, peak RSS; then a seeded search
#                  (a hill-climb over each lesson's knobs, SEARCH_EVALS builds per lesson from
#                  SEARCH_SEED, each in its own process) prints the worst setting found per lesson
#   make bench-peers the core against inference-lab on 10,000 requests, all at once and Poisson (cmd/benchpeers; needs npm)
#   make loadbench the server under 200 connections for 30 s (cmd/loadbench)
#   make lighthouse Lighthouse (pinned, cmd/lighthouse) on every page, mobile and desktop, median of 3:
#                  the table of performance / accessibility / best practices / TBT / LCP (LIGHTHOUSE_PAGES, LIGHTHOUSE_RUNS)
#   make fuzz      run every Fuzz target (of FUZZPKGS, default ./...) for FUZZTIME (default 30s) each
#   make clean     remove build outputs (distclean also removes node_modules)
#
# Needs Go 1.26+ and Node.js with npm; a missing one stops make with one line naming it.

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
# Brotli quality of web/app.wasm.br: 6 takes seconds, 11 (the Docker image) about two minutes
# in pure Go for a 27% smaller file than gzip instead of 16%.
BROTLI_QUALITY ?= 6

STATICCHECK_VERSION := 0.8.2
# Where `go install` puts staticcheck (empty when go itself is missing: check-go says so).
GOBIN_DIR := $(shell command -v $(GO) >/dev/null 2>&1 && { d=$$(GOTOOLCHAIN=local $(GO) env GOBIN); [ -n "$$d" ] || d=$$(GOTOOLCHAIN=local $(GO) env GOPATH)/bin; echo $$d; })
STATICCHECK ?= $(GOBIN_DIR)/staticcheck

WASM      := web/app.wasm
SIMWASM   := web/sim.wasm
ECHARTS   := web/echarts.min.js
BIN       := bin/inferlab
# Stamp inside node_modules: deleting node_modules or changing the lock file triggers npm ci.
NPM_STAMP := node_modules/.inferlab-npm-ci

# Wall-clock start of this make invocation (printed by `make test`).
MAKE_START := $(shell date +%s)

.PHONY: all deps chromium staticcheck check-go check-npm check-tools wasm echarts native compress build run \
	test lint lint-js test-js vet static bench bench-wasm bench-corners loadbench fuzz clean distclean

all: build

## tools: stop early, with one line, when one is missing ---------------------------------------

# Go 1.26 or newer, without letting an older go try to download a newer toolchain.
check-go:
	@command -v $(GO) >/dev/null 2>&1 || { echo "make: $(GO) not found: install Go 1.26 or newer (https://go.dev/dl/) and put it on PATH" >&2; exit 1; }
	@v=$$(GOTOOLCHAIN=local $(GO) env GOVERSION 2>/dev/null); case "$$v" in \
		go1.2[6-9]*|go1.[3-9][0-9]*|go[2-9]*) ;; \
		*) echo "make: $(GO) is $${v:-unknown}: want Go 1.26 or newer (https://go.dev/dl/)" >&2; exit 1;; esac

check-npm:
	@command -v $(NPM) >/dev/null 2>&1 || { echo "make: $(NPM) not found: install Node.js and npm (Debian: apt-get install nodejs npm)" >&2; exit 1; }
	@command -v node >/dev/null 2>&1 || { echo "make: node not found: install Node.js (Debian: apt-get install nodejs)" >&2; exit 1; }

# Both, before anything is built: a missing npm used to end the build after the wasm.
check-tools: check-go check-npm

## deps: system, npm and Go tool dependencies ------------------------------------------------

deps: check-tools chromium $(NPM_STAMP) staticcheck

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

$(NPM_STAMP): package.json package-lock.json | check-npm
	$(NPM) ci --no-audit --no-fund
	@touch $@

# staticcheck at the pinned version, installed with go install when missing or different.
staticcheck: check-go
	@if "$(STATICCHECK)" -version 2>/dev/null | grep -qF "($(STATICCHECK_VERSION))"; then \
		echo "staticcheck: $(STATICCHECK) $(STATICCHECK_VERSION) present"; \
	else \
		echo "staticcheck: go install honnef.co/go/tools/cmd/staticcheck@v$(STATICCHECK_VERSION)"; \
		$(GO) install honnef.co/go/tools/cmd/staticcheck@v$(STATICCHECK_VERSION); \
	fi

## build ------------------------------------------------------------------------------------

# ECharts' "common" build: every series and component the lab draws (line,
# bar, scatter, scroll legend, axis tooltip, toolbox, aria decals, markLine,
# markPoint) in 715 kB instead of the full build's 1.1 MB, so the page
# parses a third less script when its first chart draws.
$(ECHARTS): $(NPM_STAMP)
	cp node_modules/echarts/dist/echarts.common.min.js $@

echarts: $(ECHARTS)

# Always handed to the go tool: its build cache makes an unchanged rebuild take about a second.
# app.wasm is the page (go-app); sim.wasm the simulation worker (wasm/sim, no UI).
wasm: check-go
	GOOS=js GOARCH=wasm $(GO) build -trimpath -ldflags="-s -w" -o $(WASM) ./wasm
	GOOS=js GOARCH=wasm $(GO) build -trimpath -ldflags="-s -w" -o $(SIMWASM) ./wasm/sim

native: check-go
	@mkdir -p bin
	$(GO) build -trimpath -ldflags="$(LDFLAGS)" -o $(BIN) ./cmd/inferlab

# FILE.br and FILE.gz beside both wasm files for the server to send as they are; skipped when
# they decode to the current file.
compress: wasm native
	@$(BIN) compress --quality $(BROTLI_QUALITY) $(WASM) $(SIMWASM)

build: check-tools wasm echarts native compress

run: build
	$(BIN) serve --addr $(ADDR)

static: build
	$(BIN) static --out dist

## test -------------------------------------------------------------------------------------

vet: check-go
	$(GO) vet ./...

# ESLint (pinned in package.json, eslint.config.mjs) over web/ and webtest/.
lint-js: $(NPM_STAMP)
	@node_modules/.bin/eslint --max-warnings 0 . || { echo "make: ESLint found problems (above)" >&2; exit 1; }

# The JavaScript's unit tests: the player's stepping and the export's encoders (webtest/).
test-js: check-npm
	node --test webtest/

# go vet, staticcheck, gofmt, go mod tidy, ESLint and no merge-conflict markers; each failure ends in one line naming what to fix.
lint: check-go staticcheck
	@rc=0; \
	$(MAKE) --no-print-directory lint-js || rc=1; \
	$(GO) vet ./... || { echo "make: go vet found problems (above)" >&2; rc=1; }; \
	"$(STATICCHECK)" ./... || { echo "make: staticcheck found problems (above)" >&2; rc=1; }; \
	bad=$$("$$(GOTOOLCHAIN=local $(GO) env GOROOT)/bin/gofmt" -l $$($(GO) list -f '{{.Dir}}' ./...)); \
	if [ -n "$$bad" ]; then echo "make: gofmt would change $$(echo $$bad | tr '\n' ' ')(run gofmt -w on them)" >&2; rc=1; fi; \
	if ! $(GO) mod tidy -diff >/dev/null 2>&1; then echo "make: go mod tidy would change go.mod or go.sum (run go mod tidy)" >&2; rc=1; fi; \
	markers=$$(git grep -lE '^(<<<<<<<|>>>>>>>)( |$$)' 2>/dev/null); \
	if [ -n "$$markers" ]; then echo "make: merge conflict markers left in $$(echo $$markers | tr '\n' ' ')" >&2; rc=1; fi; \
	exit $$rc

test: deps build
	@rc=0; rm -f e2e/test-output/timing.log; \
	$(MAKE) --no-print-directory lint || rc=$$?; \
	if [ $$rc -eq 0 ]; then $(MAKE) --no-print-directory test-js || rc=$$?; fi; \
	if [ $$rc -eq 0 ]; then INFERLAB_E2E_RUN=$$(date +%s%N) $(GO) test -timeout $(TEST_TIMEOUT) $(GOTESTFLAGS) ./... || rc=$$?; fi; \
	cat e2e/test-output/timing.log 2>/dev/null || true; \
	echo "make test: $$(( $$(date +%s) - $(MAKE_START) ))s elapsed (exit $$rc)"; \
	exit $$rc

bench: check-go
	$(GO) test -run '^$$' -bench . -benchmem ./core/... ./lessons/...
	$(GO) run ./cmd/inferlab bench

# BENCHMARKS.md, "The same scenarios in WebAssembly": cmd/benchrun built natively and for
# js/wasm; the native build starts both per scenario and round (GOGC app/sim.GCPercent in both, as the page sets).
BENCH_ONLY   ?= core-10k-uniform,core-10k-chat,lesson-garage-1000,lesson-garage
BENCH_ROUNDS ?= 3
BENCH_RUNS   ?= 5
BENCH_WARMUP ?= 5
BENCH_WARMUP_MS ?= 1000
bench-wasm: check-tools
	@mkdir -p bin
	$(GO) build -trimpath -o bin/benchrun ./cmd/benchrun
	GOOS=js GOARCH=wasm $(GO) build -trimpath -ldflags="-s -w" -o bin/benchrun.wasm ./cmd/benchrun
	bin/benchrun --wasm bin/benchrun.wasm --exec "$$(GOTOOLCHAIN=local $(GO) env GOROOT)/lib/wasm/go_js_wasm_exec" \
		--only $(BENCH_ONLY) --rounds $(BENCH_ROUNDS) --runs $(BENCH_RUNS) --warmup $(BENCH_WARMUP) --warmup-ms $(BENCH_WARMUP_MS)

# BENCHMARKS.md, "Reach: weight and Lighthouse": Lighthouse 12.2.3 (cmd/lighthouse, pinned in its
# package-lock.json) over every lesson page, every embed and /, mobile preset (simulated throttling)
# and desktop preset, the median of LIGHTHOUSE_RUNS; LIGHTHOUSE_PAGES=/,/lesson/garage restricts the pages.
LIGHTHOUSE_PAGES ?=
LIGHTHOUSE_RUNS  ?= 3
LIGHTHOUSE_ADDR  ?= 127.0.0.1:8095
LH_STAMP := cmd/lighthouse/node_modules/.inferlab-npm-ci
$(LH_STAMP): cmd/lighthouse/package.json cmd/lighthouse/package-lock.json | check-npm
	cd cmd/lighthouse && $(NPM) ci --no-audit --no-fund
	@touch $@
.PHONY: lighthouse
lighthouse: build $(LH_STAMP)
	@$(BIN) serve --addr $(LIGHTHOUSE_ADDR) & pid=$$!; trap 'kill $$pid' EXIT; \
	for i in $$(seq 100); do $(BIN) health --addr $(LIGHTHOUSE_ADDR) >/dev/null 2>&1 && break; sleep 0.2; done; \
	echo "lighthouse: load average $$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"; \
	CHROME_PATH=$(CHROMIUM) node cmd/lighthouse/run.mjs --base http://$(LIGHTHOUSE_ADDR) --runs $(LIGHTHOUSE_RUNS) $(if $(LIGHTHOUSE_PAGES),--pages $(LIGHTHOUSE_PAGES))

# BENCHMARKS.md, "Heaviest allowed settings": each corner in a fresh child process of bin/inferlab;
# then "Worst settings found by search": the seeded hill-climb, each build a fresh child too.
SEARCH_EVALS ?= 24
SEARCH_SEED  ?= 1
bench-corners: native
	$(BIN) bench --corners
	$(BIN) bench --search $(SEARCH_EVALS) --seed $(SEARCH_SEED)

# BENCHMARKS.md, "Peers": whole processes, interleaved; PEER_RUNS rounds (cmd/benchpeers/README.md).
PEER_RUNS ?= 5
.PHONY: bench-peers
bench-peers: check-go check-npm
	bash cmd/benchpeers/run.sh $(PEER_RUNS)

# BENCHMARKS.md, "Server under load": loopback only, 30 s, stops by itself.
loadbench: build
	$(GO) run ./cmd/loadbench --bin $(BIN) --web web

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

# The README's pictures: headless Chromium over a few lessons at chosen steps, PNGs in docs/img/
# (cmd/screenshots; `go run ./cmd/screenshots -all -out DIR` shoots every step of every lesson).
.PHONY: screenshots
screenshots: chromium build
	$(GO) run ./cmd/screenshots --web web --out docs/img --chromium $(CHROMIUM)
