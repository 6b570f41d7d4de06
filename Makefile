# octsdb -- top-level entry points. `make run` and `make test` do all set-up
# on a fresh Debian 12 machine (packages are installed when run as root).
BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= $(shell nproc)
DATADIR    ?= ./data
PREFIX     ?= /usr/local
DESTDIR    ?=

.PHONY: all deps build test run bench fuzz lint clean install deb ui-vendor

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# Every test: the normal build's ctest suite (unit, contract, e2e, corpus
# replay, the UI in a browser), then the sanitizer builds (scripts/test.sh
# says which). Packages the tests need beyond the build: pkg (the .deb and
# install checks), ceph (the cluster the rados backend's tests run on), ui
# (the browser tests' chromium and npm packages), graph (gnuplot for /q?png).
test: build
	@scripts/install-deps.sh pkg ceph ui graph
	scripts/test.sh $(BUILD)

# The binary, man page octsdb(1), systemd unit, sysusers.d entry and example
# config under $(DESTDIR)$(PREFIX) (the config in /etc when PREFIX=/usr, kept
# if one exists); docs/service.md. Builds only what it installs.
install: deps $(BUILD)/CMakeCache.txt
	cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	cmake --build $(BUILD) -j $(JOBS) --target octsdb octsdb_docs
	DESTDIR=$(DESTDIR) cmake --install $(BUILD)

# The Debian package, built by dpkg-buildpackage/debhelper from a copy of the
# tree: $(BUILD)/deb/octsdb_<version>_<arch>.deb.
deb: deps
	@scripts/install-deps.sh pkg
	scripts/build-deb.sh $(BUILD)/deb

# Builds and runs the TSD in the foreground (Ctrl-C stops it cleanly): telnet and
# HTTP on port 4242, data in $(DATADIR), new metrics created on first use.
run: build
	$(BUILD)/octsdb tsd --port=4242 --datadir=$(DATADIR) --auto-metric

# The benchmark harness: octsdb against its peers, figures to bench/results/.
bench: deps
	scripts/bench.sh

# libFuzzer over every fuzz/fuzz_*.c target for a set time each (FUZZ_SECONDS).
fuzz: deps
	scripts/fuzz.sh

# Static checks (clang-format, cppcheck, clang-tidy; scripts/lint.sh). The
# checkers are installed only here, not for build or test.
lint: build
	@scripts/install-deps.sh lint
	scripts/lint.sh $(BUILD)

# Refreshes the vendored uPlot (ui/vendor/uplot/) from the npm registry:
# the ES module build, its CSS and LICENSE, plus SHA256SUMS of the three.
# `make ui-vendor UPLOT_VERSION=x.y.z` moves the pin; commit the result.
UPLOT_VERSION ?= 1.6.32
ui-vendor:
	@set -e; t=$$(mktemp -d); trap 'rm -rf "$$t"' EXIT; \
	(cd "$$t" && npm pack --silent uplot@$(UPLOT_VERSION) >/dev/null && tar xzf uplot-$(UPLOT_VERSION).tgz); \
	d=ui/vendor/uplot; mkdir -p $$d; \
	cp "$$t/package/dist/uPlot.esm.js" "$$t/package/dist/uPlot.min.css" "$$t/package/LICENSE" $$d/; \
	echo "$(UPLOT_VERSION)" > $$d/VERSION; \
	(cd $$d && sha256sum uPlot.esm.js uPlot.min.css LICENSE > SHA256SUMS); \
	echo "uPlot $(UPLOT_VERSION) vendored in $$d"

clean:
	rm -rf $(BUILD)
