# mcp_client: build, demo, test, install.
#   make demo                 the command-line client (mcp-client) against the fixture server
#   make test                 everything: format, lint, header drift, Rust tests, C tests (+ sanitizers)
#   make conformance          the official MCP conformance suite's client scenarios
#   make docs-test            every README code block compiled and run, history labels, links (part of make test)
#   make reference            the C API reference (target/reference/c) and cargo doc, warnings fail (in make test)
#   make fuzz                 property-based fuzzing for FUZZ_MINUTES (a short run is in make test)
#   make update-schemas       refresh the vendored official JSON Schemas from SPEC_DIR
#   make install PREFIX=/usr/local [DEBUG_SYMBOLS=1] [INSTALL_CLI=0]
#   make cli-test             the command-line client as a script and as a person (tmux) uses it
#   make dist-test            install into a temporary prefix, build hosts against it (tests/dist)
#   make apple-check          type-check the library for macOS (arm64, x86_64) and iOS (in make test)
#   make portable-test        the Rust and C suites again with the portable POSIX path (in make test)
#   make windows-test         the DLL and the C tests for Windows, run under Wine (in make test)
#   make windows-go-test      the Go binding's tests for Windows under Wine 10 (in make test; root)
#   make windows-dist WINDOWS_PREFIX=DIR   the Windows package: DLL, import and static libraries,
#                             headers, pkg-config and CMake files (windows-dist-test in make test)
# One cargo profile (dev) serves every test; `install` builds the release library.

CARGO    ?= cargo
CC       ?= cc
PREFIX   ?= /usr/local
DEBUG    := target/debug
RELEASE  := target/release
FIXTURE  := $(DEBUG)/mcp-fixture-server
CFLAGS_EXAMPLES := -std=c11 -Wall -Wextra -Wpedantic -Werror -Iinclude
# What the static archive needs from the system (`rustc --print native-static-libs`, Linux).
STATIC_LIBS := -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
EXAMPLES := list mrtr_auto mrtr_manual
VERSION  := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
# The shared library's SONAME suffix (build.rs sets it): 0.<minor> before 1.0, then <major>.
SOVERSION := $(shell echo $(VERSION) | awk -F. '{ print ($$1 == 0) ? $$1 "." $$2 : $$1 }')

.PHONY: all build demo examples test lint header-check rust-test c-test conformance install uninstall clean \
	dist-lib dist-test \
	bindings-test python-test go-test cpp-test swift-test interop-test

all: build

# The SONAME link lets hosts linked against target/debug run from there, as after an install.
# target/pkgconfig/*-uninstalled.pc let in-repo hosts (the Go binding) find this tree's library.
build:
	$(CARGO) build --workspace --locked
	ln -sf libmcp_client.so $(DEBUG)/libmcp_client.so.$(SOVERSION)
	@mkdir -p target/pkgconfig
	@for name in mcp_client mcp_client-static; do \
	  sed -e "s|@NAME@|$$name|g" -e 's|@REPO@|$(CURDIR)|g' -e 's|@LIBDIR@|$(CURDIR)/$(DEBUG)|g' \
	    -e 's|@VERSION@|$(VERSION)|g' -e 's|@STATIC_LIBS@|$(STATIC_LIBS)|g' \
	    dist/mcp_client-uninstalled.pc.in > target/pkgconfig/$$name-uninstalled.pc; \
	done

examples: build $(EXAMPLES:%=$(DEBUG)/examples-c/%)

$(DEBUG)/examples-c/%: examples/c/%.c examples/c/common.h include/mcp_client.h $(DEBUG)/libmcp_client.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_EXAMPLES) -o $@ $< $(DEBUG)/libmcp_client.a $(STATIC_LIBS)

$(DEBUG)/libmcp_client.a: build

# The C examples against the fixture server (docs/c.md points to them).
.PHONY: examples-test
examples-test: examples
	$(DEBUG)/examples-c/list $(FIXTURE) > /dev/null
	$(DEBUG)/examples-c/mrtr_auto $(FIXTURE) < /dev/null
	$(DEBUG)/examples-c/mrtr_manual $(FIXTURE)

# What a new user sees first (README.md opens with it): the command-line client against the
# fixture server. `$(DEMO) ARGS` shows the command as typed, then runs it.
CLI      := $(DEBUG)/mcp-client
DEMO      = @show() { printf '\n$$ mcp-client %s -- mcp-fixture-server\n' "$$*"; }; show
demo: build
	$(DEMO) info; $(CLI) info -- $(FIXTURE)
	$(DEMO) tools; $(CLI) tools -- $(FIXTURE)
	$(DEMO) prompts; $(CLI) prompts -- $(FIXTURE)
	$(DEMO) call add a=2 b=3; $(CLI) call add a=2 b=3 -- $(FIXTURE)
	@echo; echo "# a call whose server asks a question (MRTR), answered from a scripted terminal:"
	$(DEMO) call elicit_once; printf 'accept\nAda\n' | $(CLI) call elicit_once -- $(FIXTURE)
	@echo; echo "# the manual route: print what the server asked, exit with code 5"
	$(DEMO) --no-input call elicit_once; $(CLI) --no-input call elicit_once -- $(FIXTURE); \
	  code=$$?; echo "(exit code $$code)"; test $$code -eq 5

test: lint header-check rust-test fuzz-smoke docs-test reference c-test examples-test faults-test conformance bindings-test export-test interop-test cli-test dist-test apple-check portable-test windows-test windows-go-test windows-dist-test
	@echo "make test: all suites passed"

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --all-features --locked -- -D warnings
	# The default build too: features open modules, so code only they use would hide as dead.
	$(CARGO) clippy --lib --locked -- -D warnings

# The build regenerates include/mcp_client.h; a committed header that differs is ABI drift.
header-check: build
	@if [ -d .git ]; then \
	  git diff --exit-code -- include/mcp_client.h || { echo "include/mcp_client.h is stale: commit the regenerated header"; exit 1; }; \
	else echo "header-check: not a git checkout, skipped"; fi

# `testing` opens the C ABI module to the Rust tests that call it (Cargo.toml); the `tracing`
# bridge's test needs its feature too (one more build of the library).
rust-test: build
	$(CARGO) test --workspace --locked --features testing
	$(CARGO) test --locked --features testing,tracing --test tracing_bridge

# Every code block of the READMEs compiled, and run against the fixture server where it talks to
# one (conventions at the top of tests/docs/check.py; README.md's Rust blocks are doctests).
# First the quick hygiene checks (tests/docs/hygiene.py): no numbered history labels in tracked
# files, no broken relative links or anchors in tracked Markdown, README and ARCHITECTURE lengths.
.PHONY: docs-test
docs-test: build
	python3 tests/docs/hygiene.py
	python3 tests/docs/check.py

# The C API reference (target/reference/c/index.md, one Markdown page per group of functions) from
# the header's comments, and the Rust docs (target/doc; private items too, since module comments
# carry the design) of the library and the fixture server. Both fail on warnings: a function
# without a comment or in no group, an empty group, a comment naming an mcp_*/MCP_* identifier
# the header lacks (tests/docs/reference.py); any rustdoc warning.
.PHONY: reference
reference: build
	python3 tests/docs/reference.py --out target/reference/c
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps --locked --document-private-items

# Property-based fuzzing of the parsers (tests/fuzz, proptest): a few seconds in `make test`,
# FUZZ_MINUTES of it in `make fuzz` (not in CI). Saved failures in tests/proptest-regressions
# replay first on every run; commit new ones with their fix.
FUZZ_CARGO = $(CARGO) test --locked --features fuzzing --test fuzz
FUZZ_MINUTES ?= 5
.PHONY: fuzz fuzz-smoke
fuzz-smoke:
	PROPTEST_CASES=64 $(FUZZ_CARGO)

# Rounds of fresh random cases until FUZZ_MINUTES have passed (each round is a new seed).
fuzz:
	@end=$$(( $$(date +%s) + 60 * $(FUZZ_MINUTES) )); round=0; \
	while [ $$(date +%s) -lt $$end ]; do \
	  round=$$((round + 1)); echo "== fuzz round $$round"; \
	  PROPTEST_CASES=$${PROPTEST_CASES:-20000} $(FUZZ_CARGO) -q || exit 1; \
	done

c-test: build
	$(MAKE) -C tests/c test sanitize symbols LIBDIR=$(CURDIR)/$(DEBUG) FIXTURE=$(CURDIR)/$(FIXTURE)

# Apple targets cannot be built or run here (no SDK): the library is type-checked for them with
# Debian's 1.96 toolchain and -Zbuild-std (the script installs what it needs; docs/platforms.md).
.PHONY: apple-check portable-test
apple-check:
	tests/cross/apple-check.bash

# The portable POSIX path (the `portable-posix` feature: what macOS and iOS always run) under the
# whole Rust suite and the C suite's static run. Same target directory: only mcp_client and the
# tests recompile; the last step puts the default library back into target/debug.
portable-test:
	$(CARGO) build --workspace --locked --features mcp_client/portable-posix
	$(CARGO) test --workspace --locked --features testing,portable-posix
	$(MAKE) -C tests/c test-static BUILD=build/portable LIBDIR=$(CURDIR)/$(DEBUG) FIXTURE=$(CURDIR)/$(FIXTURE)
	$(MAKE) build

# Windows: the DLL, the fixture server and the C tests built for x86_64-win7-windows-gnu with
# Debian's rustc-web (-Zbuild-std) and MinGW-w64, run under Wine (tests/cross/windows.bash; the
# toolchain is installed by tests/cross/toolchain.bash). TESTS="windows/" narrows the run.
.PHONY: windows-test
windows-test:
	tests/cross/windows.bash

# Windows packaging: mcp_client.dll (bin/), its import library and the static library (lib/),
# the headers, pkg-config and CMake files in WINDOWS_PREFIX (tests/cross/windows-dist.bash;
# WINDOWS_PROFILE=dev packs windows-test's debug build instead of an LTO release build).
# windows-dist-test installs the dev build into a temporary prefix, builds C and C++ hosts with
# MinGW-w64 from outside the repository through pkg-config and CMake, runs them under Wine, and
# builds and checks the win_amd64 Python wheel (tests/cross/windows-dist-test.bash).
WINDOWS_PREFIX  ?= $(CURDIR)/target/windows-dist
WINDOWS_PROFILE ?= release
# What the static library needs from Windows (`rustc --print native-static-libs`, Windows GNU).
WINDOWS_STATIC_LIBS := -lbcrypt -ladvapi32 -lkernel32 -lntdll -luserenv -lws2_32 -ldbghelp
.PHONY: windows-dist windows-dist-files windows-dist-test
windows-dist:
	tests/cross/windows-dist.bash "$(WINDOWS_PREFIX)" $(WINDOWS_PROFILE)

windows-dist-files:
	@$(MAKE) --no-print-directory dist-files STATIC_LIBS='$(WINDOWS_STATIC_LIBS)'

windows-dist-test:
	tests/cross/windows-dist-test.bash

# The Go binding's tests for Windows (cgo + MinGW-w64 against mcp_client.dll), run under Wine 10
# from the Debian trixie root (tests/cross/windows-go.bash, tests/cross/wine-trixie.bash; root).
.PHONY: windows-go-test
windows-go-test:
	tests/cross/windows-go.bash

# Fault suites: the C ABI against hostile servers (tests/faults/*/README.md): io (hangs,
# floods, nesting, batches, bounds) and api (strings, numbers, hosts, connect errors, reconnect).
.PHONY: faults-test faults-io-test faults-api-test
faults-test: faults-io-test faults-api-test

faults-io-test: build
	$(MAKE) -C tests/faults/io test LIBDIR=$(CURDIR)/$(DEBUG) FIXTURE=$(CURDIR)/$(FIXTURE)

faults-api-test: build
	$(MAKE) -C tests/faults/api test sanitize LIBDIR=$(CURDIR)/$(DEBUG) FIXTURE=$(CURDIR)/$(FIXTURE)

# Each binding's own suite, against the debug library and the fixture server.
BINDING_VARS = LIBDIR=$(CURDIR)/$(DEBUG) FIXTURE=$(CURDIR)/$(FIXTURE)
bindings-test: python-test go-test cpp-test swift-test

python-test: build
	$(MAKE) -C bindings/python test $(BINDING_VARS)

go-test: build
	$(MAKE) -C bindings/go test $(BINDING_VARS)

cpp-test: build
	$(MAKE) -C bindings/cpp test sanitize $(BINDING_VARS)

swift-test: build
	bindings/swift/run-tests.sh $(CURDIR)/$(DEBUG) $(CURDIR)/$(FIXTURE)

# Exported tools and dispatch's result messages parsed by the pinned openai, anthropic and
# google-genai packages' own types (tests/export; a cached venv, no network calls).
.PHONY: export-test
export-test: build
	$(MAKE) -C tests/export test $(BINDING_VARS)

# The command-line client (tests/cli): as a script (--json, exit codes) and as a person in a real
# terminal (tmux), against the fixture (both eras, stdio and HTTP), server-everything and
# mcp-server-time (from the interop cache). tests/cli/setup.sh installs tmux (and zsh, fish).
.PHONY: cli-test
cli-test: build
	tests/cli/setup.sh
	@cache="$$(tests/interop/setup.sh)" || exit 1; \
	MCP_INTEROP_CACHE="$$cache" MCP_CLI=$(CURDIR)/$(CLI) MCP_FIXTURE=$(CURDIR)/$(FIXTURE) PYTHONDONTWRITEBYTECODE=1 \
	  "$$cache/py/venv/bin/python" -m pytest -p no:cacheprovider -n 3 -q tests/cli

# Interoperability with the official Python and TypeScript SDK servers and server-everything.
interop-test: build
	$(MAKE) -C tests/interop test $(BINDING_VARS)

# The official MCP conformance suite (client scenarios) against tests/conformance/client.c.
conformance: build $(DEBUG)/conformance-client
	tests/conformance/run.sh $(DEBUG)/conformance-client

$(DEBUG)/conformance-client: tests/conformance/client.c include/mcp_client.h $(DEBUG)/libmcp_client.a
	$(CC) $(CFLAGS_EXAMPLES) -o $@ $< $(DEBUG)/libmcp_client.a $(STATIC_LIBS)

# Benchmarks against rmcp, the TypeScript and Python SDK clients and a raw baseline (not part of
# `make test`); writes bench/results/latest.{md,json}. See bench/README.md. (bench/ is a folder.)
.PHONY: update-schemas
# Refresh the vendored official JSON Schemas (tests/vectors/mcp-schema, read by tests/wire_schema.rs)
# from SPEC_DIR/<version>/schema.json (required: an upstream checkout's schema/ folder).
# Not part of `make test`: tests read only the committed copies.
SCHEMA_VERSIONS := 2025-11-25 2026-07-28
SCHEMA_DIR := tests/vectors/mcp-schema
update-schemas:
	@test -n "$(SPEC_DIR)" || { echo "update-schemas: set SPEC_DIR=<upstream checkout>/schema"; exit 1; }
	@for v in $(SCHEMA_VERSIONS); do \
	  test -f $(SPEC_DIR)/$$v/schema.json || { echo "update-schemas: no $(SPEC_DIR)/$$v/schema.json (set SPEC_DIR)"; exit 1; }; \
	  mkdir -p $(SCHEMA_DIR)/$$v && cp $(SPEC_DIR)/$$v/schema.json $(SCHEMA_DIR)/$$v/schema.json; \
	done
	cd $(SCHEMA_DIR) && sha256sum $(SCHEMA_VERSIONS:%=%/schema.json) > SHA256SUMS
	@git diff --stat -- $(SCHEMA_DIR) || true

.PHONY: bench
bench:
	python3 bench/run.py $(BENCH_ARGS)

# One small target: a cached tools/list (SEP-2549) costs no round trip (bench/results/cache.md).
.PHONY: bench-cache
bench-cache:
	python3 bench/run.py --only cache $(BENCH_ARGS)

# The many-clients targets in full: isolated and shared runtime against the raw baseline,
# 200 clients each on its own server (bench/results/many.md).
.PHONY: bench-many
bench-many:
	python3 bench/run.py --only many $(BENCH_ARGS)

# The hub targets: 1, 5 and 20 stdio members connected at once against the raw baseline, the
# merged tools/list from the cache, threads per member count (bench/results/hub.md).
.PHONY: bench-hub
bench-hub:
	python3 bench/run.py --only hub $(BENCH_ARGS)

# The HTTPS targets: sequential calls (JSON, SSE), connect + first call, 64 started calls on one
# HTTP/2 connection, a CONNECT proxy and a 100 KB echo, each against a raw rustls client
# (bench/src/bin/tls.rs; bench/results/https.md). Builds no rmcp.
.PHONY: bench-https
bench-https:
	python3 bench/run.py --only https $(BENCH_ARGS)

# The large-payload targets: a 100 KB echo over stdio and plain HTTP (JSON and SSE), instructions
# per call under callgrind (installs valgrind with apt-get when missing) and calls/s against the
# raw baselines (bench/results/large.md).
.PHONY: bench-large
bench-large:
	python3 bench/run.py --only large $(BENCH_ARGS)

# The span listener's CPU per call: none, a no-op one, and the library from before spans (built
# once in a scratch directory under the cache, then deleted) (bench/results/spans.md).
.PHONY: bench-spans
bench-spans:
	python3 bench/run.py --only spans $(BENCH_ARGS)

# `make install` ships the release profile (fat LTO, stripped). DEBUG_SYMBOLS=1 builds the same
# code with debug info (profile release-debug) and installs it beside the library as
# libmcp_client.so.<version>.debug, linked by .gnu_debuglink (gdb finds it; see README).
ifeq ($(DEBUG_SYMBOLS),1)
INSTALL_PROFILE := release-debug
else
INSTALL_PROFILE := release
endif
# `cargo rustc --crate-type cdylib,staticlib` builds the shipped library: cargo runs LTO only when
# every crate type of a target allows it, and our `rlib` (for the Rust tests) does not, so a plain
# `cargo build --release` links without LTO. Its own target dir keeps this build (bitcode-only
# dependencies) and `cargo build --release` from rebuilding each other.
DIST_TARGET  := target/dist
INSTALL_FROM := $(DIST_TARGET)/$(INSTALL_PROFILE)
LIB_DEST     := $(DESTDIR)$(PREFIX)/lib
INC_DEST     := $(DESTDIR)$(PREFIX)/include
CMAKE_DEST   := $(LIB_DEST)/cmake/mcp_client
SO_FILE      := libmcp_client.so.$(VERSION)
empty :=
space := $(empty) $(empty)
# Values substituted into dist/*.in.
DIST_SED := -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@SOVERSION@|$(SOVERSION)|g' \
	-e 's|@MAJOR@|$(word 1,$(subst ., ,$(VERSION)))|g' -e 's|@MINOR@|$(word 2,$(subst ., ,$(VERSION)))|g' \
	-e 's|@STATIC_LIBS@|$(STATIC_LIBS)|g' -e 's|@CMAKE_STATIC_LIBS@|$(subst $(space),;,$(patsubst -l%,%,$(STATIC_LIBS)))|g' \
	-e 's|@SIZEOF_VOID_P@|$(shell echo $$(( $$(getconf LONG_BIT) / 8 )))|g'

# The LTO-built libraries in $(INSTALL_FROM) (also what a packager would ship).
dist-lib:
	$(CARGO) rustc --profile $(INSTALL_PROFILE) --locked -p mcp_client --lib --crate-type cdylib,staticlib \
	  --target-dir $(DIST_TARGET)

# Without DEBUG_SYMBOLS the archive loses the standard library's line tables, which every static
# host would otherwise copy in.
install: dist-lib $(if $(filter 0,$(INSTALL_CLI)),,install-cli)
	install -d $(LIB_DEST) $(INC_DEST) $(LIB_DEST)/pkgconfig $(CMAKE_DEST)
	install -m 644 $(INSTALL_FROM)/libmcp_client.a $(LIB_DEST)/
	install -m 755 $(INSTALL_FROM)/libmcp_client.so $(LIB_DEST)/$(SO_FILE)
ifeq ($(DEBUG_SYMBOLS),1)
	cd $(LIB_DEST) && objcopy --only-keep-debug $(SO_FILE) $(SO_FILE).debug && chmod 644 $(SO_FILE).debug \
	  && objcopy --strip-debug --strip-unneeded --add-gnu-debuglink=$(SO_FILE).debug $(SO_FILE)
else
	strip --strip-debug $(LIB_DEST)/libmcp_client.a
endif
	ln -sf $(SO_FILE) $(LIB_DEST)/libmcp_client.so.$(SOVERSION)
	ln -sf libmcp_client.so.$(SOVERSION) $(LIB_DEST)/libmcp_client.so
	install -m 644 include/mcp_client.h include/mcp_client.config.schema.json bindings/cpp/mcp_client.hpp $(INC_DEST)/
	@$(MAKE) --no-print-directory dist-files

# The pkg-config and CMake files for $(PREFIX), from dist/*.in (install, windows-dist).
.PHONY: dist-files
dist-files:
	@install -d $(LIB_DEST)/pkgconfig $(CMAKE_DEST)
	@echo "filling dist/*.in into $(LIB_DEST)/pkgconfig and $(CMAKE_DEST)"
	@sed $(DIST_SED) dist/mcp_client.pc.in > $(LIB_DEST)/pkgconfig/mcp_client.pc
	@sed $(DIST_SED) dist/mcp_client-static.pc.in > $(LIB_DEST)/pkgconfig/mcp_client-static.pc
	@sed $(DIST_SED) dist/cmake/mcp_client-config.cmake.in > $(CMAKE_DEST)/mcp_client-config.cmake
	@sed $(DIST_SED) dist/cmake/mcp_client-config-version.cmake.in > $(CMAKE_DEST)/mcp_client-config-version.cmake

# The command-line client (cli/), release profile, into $(PREFIX)/bin; INSTALL_CLI=0 leaves it out.
.PHONY: install-cli
install-cli:
	$(CARGO) build --release --locked -p mcp-client --target-dir $(DIST_TARGET)/cli
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(DIST_TARGET)/cli/release/mcp-client $(DESTDIR)$(PREFIX)/bin/

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/mcp-client
	rm -f $(LIB_DEST)/libmcp_client.* $(INC_DEST)/mcp_client.h $(INC_DEST)/mcp_client.hpp \
	  $(INC_DEST)/mcp_client.config.schema.json \
	  $(LIB_DEST)/pkgconfig/mcp_client.pc $(LIB_DEST)/pkgconfig/mcp_client-static.pc \
	  $(CMAKE_DEST)/mcp_client-config.cmake $(CMAKE_DEST)/mcp_client-config-version.cmake
	rmdir $(CMAKE_DEST) 2>/dev/null || true

# Installs into a temporary prefix, then builds and runs C (pkg-config), CMake (C, C++), Go and
# the other tests/dist/<lang>.sh hosts against it from outside the repository; prints the sizes.
dist-test: build
	@tmp=$$(mktemp -d "$${TMPDIR:-/tmp}/mcp-dist-prefix.XXXXXX") && \
	  trap 'rm -rf "$$tmp"' EXIT && \
	  $(MAKE) --no-print-directory install INSTALL_CLI=0 PREFIX=$$tmp/prefix && \
	  tests/dist/run.sh $$tmp/prefix $(CURDIR)/$(FIXTURE)

clean:
	$(CARGO) clean
	-$(MAKE) -C tests/c clean
	-$(MAKE) -C tests/faults/io clean
