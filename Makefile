# mcp_client: build, demo, test, install.
#   make demo                 build the library and run the C examples against the fixture server
#   make test                 everything: format, lint, header drift, Rust tests, C tests (+ sanitizers)
#   make conformance          the official MCP conformance suite's client scenarios
#   make docs-test            every README code block compiled and run (part of make test)
#   make fuzz                 property-based fuzzing for FUZZ_MINUTES (a short run is in make test)
#   make update-schemas       refresh the vendored official JSON Schemas from SPEC_DIR
#   make install PREFIX=/usr/local
# One cargo profile (dev) serves every test; `install` builds the release library.

CARGO    ?= cargo
CC       ?= cc
PREFIX   ?= /usr/local
DEBUG    := target/debug
RELEASE  := target/release
FIXTURE  := $(DEBUG)/mcp-fixture-server
CFLAGS_EXAMPLES := -std=c11 -Wall -Wextra -Wpedantic -Werror -Iinclude
STATIC_LIBS := -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
EXAMPLES := list mrtr_auto mrtr_manual
VERSION  := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
# The shared library's SONAME suffix (build.rs sets it): 0.<minor> before 1.0, then <major>.
SOVERSION := $(shell echo $(VERSION) | awk -F. '{ print ($$1 == 0) ? $$1 "." $$2 : $$1 }')

.PHONY: all build demo examples test lint header-check rust-test c-test conformance install uninstall clean \
	bindings-test python-test go-test cpp-test swift-test interop-test

all: build

# The SONAME link lets hosts linked against target/debug run from there, as after an install.
build:
	$(CARGO) build --workspace --locked
	ln -sf libmcp_client.so $(DEBUG)/libmcp_client.so.$(SOVERSION)

examples: build $(EXAMPLES:%=$(DEBUG)/examples-c/%)

$(DEBUG)/examples-c/%: examples/c/%.c examples/c/common.h include/mcp_client.h $(DEBUG)/libmcp_client.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_EXAMPLES) -o $@ $< $(DEBUG)/libmcp_client.a $(STATIC_LIBS)

$(DEBUG)/libmcp_client.a: build

demo: examples
	@echo "== listing the fixture server's tools, prompts and resources =="
	$(DEBUG)/examples-c/list $(FIXTURE)
	@echo "== automatic MRTR: the elicitation handler answers each round =="
	$(DEBUG)/examples-c/mrtr_auto $(FIXTURE) < /dev/null
	@echo "== manual MRTR: MCP_INPUT_REQUIRED, then a retry with the answers =="
	$(DEBUG)/examples-c/mrtr_manual $(FIXTURE)

test: lint header-check rust-test fuzz-smoke docs-test c-test conformance bindings-test interop-test
	@echo "make test: all suites passed"

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --all-features --locked -- -D warnings

# The build regenerates include/mcp_client.h; a committed header that differs is ABI drift.
header-check: build
	@if [ -d .git ]; then \
	  git diff --exit-code -- include/mcp_client.h || { echo "include/mcp_client.h is stale: commit the regenerated header"; exit 1; }; \
	else echo "header-check: not a git checkout, skipped"; fi

rust-test: build
	$(CARGO) test --workspace --locked

# Every code block of the READMEs compiled, and run against the fixture server where it talks to
# one (conventions at the top of tests/docs/check.py; README.md's Rust blocks are doctests).
.PHONY: docs-test
docs-test: build
	python3 tests/docs/check.py

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
# from SPEC_DIR/<version>/schema.json: an upstream checkout's schema/ folder or the shared spec copy.
# Not part of `make test`: tests read only the committed copies.
SCHEMA_VERSIONS := 2025-11-25 2026-07-28
SCHEMA_DIR := tests/vectors/mcp-schema
SPEC_DIR ?= ../shared/spec
update-schemas:
	@for v in $(SCHEMA_VERSIONS); do \
	  test -f $(SPEC_DIR)/$$v/schema.json || { echo "update-schemas: no $(SPEC_DIR)/$$v/schema.json (set SPEC_DIR)"; exit 1; }; \
	  mkdir -p $(SCHEMA_DIR)/$$v && cp $(SPEC_DIR)/$$v/schema.json $(SCHEMA_DIR)/$$v/schema.json; \
	done
	cd $(SCHEMA_DIR) && sha256sum $(SCHEMA_VERSIONS:%=%/schema.json) > SHA256SUMS
	@git diff --stat -- $(SCHEMA_DIR) || true

.PHONY: bench
bench:
	python3 bench/run.py $(BENCH_ARGS)

install:
	$(CARGO) build --release --locked -p mcp_client
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 $(RELEASE)/libmcp_client.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(RELEASE)/libmcp_client.so $(DESTDIR)$(PREFIX)/lib/libmcp_client.so.$(VERSION)
	ln -sf libmcp_client.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libmcp_client.so.$(SOVERSION)
	ln -sf libmcp_client.so.$(SOVERSION) $(DESTDIR)$(PREFIX)/lib/libmcp_client.so
	install -m 644 include/mcp_client.h $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@STATIC_LIBS@|$(STATIC_LIBS)|g' \
	  mcp_client.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/mcp_client.pc

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/libmcp_client.* $(DESTDIR)$(PREFIX)/include/mcp_client.h \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig/mcp_client.pc

clean:
	$(CARGO) clean
	-$(MAKE) -C tests/c clean
