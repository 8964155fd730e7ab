# Thin wrapper over CMake. The two set-up commands are `make run` and `make test`;
# both install what is missing (scripts/deps.sh), then build.
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
WEB_BUILD  ?= build-web
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 15

.PHONY: all deps build install uninstall run test test-release test-sanitize fuzz bench bench-python bench-peers \
        check-format check-includes clean web editor test-web lint-web bench-web bench-editor editor-screenshots \
        bench-web-softbody

all: build

deps:
	@scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DMN_WERROR=ON > /dev/null
	@cmake --build $(BUILD) -j$(JOBS)

# The headers, libmarionette.so.0 and libmarionette.a, marionette.pc, the CMake package, the
# command with its man page and bash completion, the editor's page (built first: make web)
# and the LICENSE, under PREFIX (DESTDIR honoured: staging). The files go into
# $(BUILD)/install_manifest.txt and the folders the install created into
# $(BUILD)/install_dirs.txt, for `make uninstall` (docs/install.md).
install: build web
	@scripts/install.sh $(BUILD) $(PREFIX)

# Removes what `make install` wrote (its manifest) and the folders it created, when empty.
uninstall:
	@scripts/uninstall.sh $(BUILD)

# The editor: only what it needs (the library and the command, the WebAssembly module and
# the page in web/editor/dist; no test or benchmark binary), then the server on the scratch
# project; open the URL it prints (http://127.0.0.1:8765/?token=..., or PORT=N: make run PORT=9000).
PORT ?=
run: deps web
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DMN_WERROR=ON > /dev/null
	@cmake --build $(BUILD) -j$(JOBS) --target marionette_cli
	./$(BUILD)/marionette editor $(if $(PORT),--port $(PORT))

# Every test: the release build, the fuzz targets briefly, then the whole suite
# again under AddressSanitizer + UndefinedBehaviorSanitizer.
test: deps
	@$(MAKE) --no-print-directory fuzz
	@$(MAKE) --no-print-directory test-release
	@$(MAKE) --no-print-directory test-sanitize
	@$(MAKE) --no-print-directory test-web

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

test-sanitize: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DMN_WERROR=ON -DMN_SANITIZE=ON > /dev/null
	@cmake --build $(ASAN_BUILD) -j$(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j$(JOBS)

fuzz: deps
	@CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMN_FUZZ=ON > /dev/null
	@cmake --build $(FUZZ_BUILD) -j$(JOBS) --target fuzz_all
	@scripts/run_fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

bench: build
	@scripts/run_bench.sh $(BUILD)

# The Python package: one IK solve per call from Python against the library's own time,
# and a batch of targets in one call (python/bench/bench_python.py; docs/python.md).
bench-python: build
	@MARIONETTE_LIBRARY=$(CURDIR)/$(BUILD)/lib/libmarionette.so.0 /usr/bin/python3 python/bench/bench_python.py

# The optional peers (KDL's IK solvers on the same robot protocol): installs them first.
bench-peers:
	@scripts/deps-bench.sh
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DMN_WERROR=ON > /dev/null
	@cmake --build $(BUILD) -j$(JOBS) --target kdl_peer
	@bench/peers/kdl/run.sh $(BUILD)

# clang-format --dry-run --Werror over src, include, cli, tests, bench, fuzz, examples,
# editor and web/src (also run by ctest as guard.check_format). FILES=... checks only those.
check-format:
	@scripts/check-format.sh $(FILES)

# The include rules of docs/architecture.md (also run by ctest as guard.check_includes).
check-includes:
	@scripts/check-includes.sh

# The WebAssembly module (clang for wasm32, wasi-libc, lld: web/cmake/wasm32-wasi.cmake),
# copied into web/ next to the JavaScript API.
# Then the editor's page (docs/editor.md): web/editor/src/main.js bundled by esbuild with
# three.js into web/editor/dist/editor.js, next to index.html, editor.css and the module;
# the soft-body page (docs/softbody-browser.md) likewise into softbody.js, with CesiumMan.
web: deps web/node_modules/.package-lock.json
	@cmake -S web -B $(WEB_BUILD) -DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/web/cmake/wasm32-wasi.cmake -DCMAKE_BUILD_TYPE=Release > /dev/null
	@cmake --build $(WEB_BUILD) -j$(JOBS)
	@cp $(WEB_BUILD)/marionette.wasm web/marionette.wasm
	@$(MAKE) --no-print-directory editor

EDITOR_DIST = web/editor/dist
editor: web/node_modules/.package-lock.json
	@mkdir -p $(EDITOR_DIST)
	@cd web && node_modules/.bin/esbuild editor/src/main.js --bundle --format=esm --target=es2020 \
		--external:node:* --sourcemap --log-level=warning --outfile=editor/dist/editor.js
	@cp web/editor/index.html web/editor/editor.css web/marionette.wasm $(EDITOR_DIST)/
	@cd web && node_modules/.bin/esbuild editor/src/softbody/main.js --bundle --format=esm --target=es2020 \
		--external:node:* --sourcemap --log-level=warning --outfile=editor/dist/softbody.js
	@cp web/editor/softbody.html data/skinned/CesiumMan.glb $(EDITOR_DIST)/

# web/'s npm packages (playwright-core for the browser test, the benchmark's peers), from
# the lockfile: npm ci when node_modules is missing or older than package.json or the lockfile.
web/node_modules/.package-lock.json: web/package.json web/package-lock.json
	cd web && npm ci --no-audit --no-fund
	@touch $@

# The JavaScript gate: ESLint (web/eslint.config.js) and Prettier (web/.prettierrc.json) over
# the module, the editor page, the tests and the benchmarks, both from web/'s lockfile;
# `cd web && npm run format` rewrites what the check refuses.
lint-web: web/node_modules/.package-lock.json
	cd web && npm run --silent lint && npm run --silent format:check

# The module's tests (node --test), against the native build's results: in Node, then in
# Debian's Chromium, headless (test/browser.test.mjs).
# The editor's tests (test/editor*.test.mjs) start the real `marionette editor` (MN_CLI) on
# temporary projects and drive the page in Chromium.
BROWSER_TESTS = web/test/browser.test.mjs $(wildcard web/test/editor*.test.mjs)
NODE_TESTS = $(patsubst web/%,%,$(filter-out $(BROWSER_TESTS),$(wildcard web/test/*.test.mjs)))
test-web: build web web/node_modules/.package-lock.json lint-web
	cd web && MN_CLI=$(CURDIR)/$(BUILD)/marionette node --test --test-reporter=tap $(NODE_TESTS)
	cd web && MN_CLI=$(CURDIR)/$(BUILD)/marionette node --test --test-reporter=tap --test-concurrency=1 \
		$(patsubst web/%,%,$(BROWSER_TESTS))

# The module against three.js's CCDIKSolver and closed-chain-ik (installed with the
# lockfile), and the native build on the same targets.
bench-web: build web web/node_modules/.package-lock.json
	cd web && MN_CLI=$(CURDIR)/$(BUILD)/marionette node bench/bench_ik.mjs

# The soft-body benchmark in WebAssembly (web/bench/bench_softbody.mjs): the problem of
# `marionette bench sim` in the module, key=value lines; then the soft-body page's solver
# time per frame on CesiumMan in headless Chromium.
bench-web-softbody: build web web/node_modules/.package-lock.json
	cd web && node bench/bench_softbody.mjs
	cd web && MN_CLI=$(CURDIR)/$(BUILD)/marionette node bench/bench_softbody_page.mjs

# The editor's drag benchmark in Chromium (web/bench/bench_editor.mjs): key=value lines.
bench-editor: build web web/node_modules/.package-lock.json
	cd web && MN_CLI=$(CURDIR)/$(BUILD)/marionette node bench/bench_editor.mjs
	cd web && MN_CLI=$(CURDIR)/$(BUILD)/marionette node bench/bench_editor_anim.mjs

# The screenshots of docs/editor.md, taken again.
editor-screenshots: build web web/node_modules/.package-lock.json
	cd web && MN_CLI=$(CURDIR)/$(BUILD)/marionette node test/screenshots.mjs ../docs/images/editor
	cd web && MN_CLI=$(CURDIR)/$(BUILD)/marionette node test/screenshots-comfort.mjs ../docs/images/editor
	cd web && MN_CLI=$(CURDIR)/$(BUILD)/marionette node test/screenshots-figures.mjs ../docs/images/editor
	cd web && MN_CLI=$(CURDIR)/$(BUILD)/marionette node test/screenshots-anim.mjs ../docs/images/editor-anim
	cd web && MN_CLI=$(CURDIR)/$(BUILD)/marionette node test/screenshots-softbody.mjs ../docs/images/softbody

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(WEB_BUILD)
