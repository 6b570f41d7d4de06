# octsdb -- top-level entry points. `make run` and `make test` do all set-up
# on a fresh Debian 12 machine (packages are installed when run as root).
BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= $(shell nproc)
DATADIR    ?= ./data

.PHONY: all deps build test run bench lint clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Builds and runs the TSD in the foreground (Ctrl-C stops it cleanly): telnet and
# HTTP on port 4242, data in $(DATADIR), new metrics created on first use.
run: build
	$(BUILD)/octsdb tsd --port=4242 --datadir=$(DATADIR) --auto-metric

bench: build
	scripts/run-bench.sh $(BUILD)

lint: build
	scripts/lint.sh $(BUILD)

clean:
	rm -rf $(BUILD)
