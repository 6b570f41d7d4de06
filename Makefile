# octsdb -- top-level entry points. `make run` and `make test` do all set-up
# on a fresh Debian 12 machine (packages are installed when run as root).
BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= $(shell nproc)
DATADIR    ?= ./data
PREFIX     ?= /usr/local
DESTDIR    ?=

.PHONY: all deps build test run bench fuzz lint clean install deb

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# Every test: the normal build's ctest suite (unit, contract, e2e, corpus
# replay), then the sanitizer builds (scripts/test.sh says which). The Ceph
# packages are for the cluster the rados backend's contract tests run on.
test: build
	@scripts/install-deps.sh pkg ceph
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

clean:
	rm -rf $(BUILD)
