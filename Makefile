# kstep: build, test, benchmark and lint the one binary and its packages.
# `make test` is what CI runs (through .ci/run); tests that start clusters
# use the binary built here, found through KSTEP_BIN.

GO        ?= go
BIN       := bin/kstep
KSTEP_BIN := $(CURDIR)/$(BIN)
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
# Per-benchmark time (or iterations, e.g. 100x) for bench-api.
BENCHTIME ?= 2s

.PHONY: all build test bench bench-api lint fmt clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/kstep

test: build
	KSTEP_BIN=$(KSTEP_BIN) $(GO) test -count=1 -timeout 45m ./...

# The main job. Until the step harness lands (kstep bench), it is the
# apiserver's benchmarks.
bench: bench-api

# The apiserver's benchmarks: creates/s and latency through one apiserver on
# a 3-member etcd (real processes), watch fan-out to 1,000 watchers, and the
# in-process micro-benchmarks of the apiserver's packages.
bench-api: build
	KSTEP_BIN=$(KSTEP_BIN) $(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) ./test/bench/
	$(GO) test -run '^$$' -bench . -benchmem ./cluster/apiserver/... ./cluster/storage/...

lint:
	@unformatted="$$(gofmt -l .)"; \
	if [ -n "$$unformatted" ]; then \
		echo "gofmt: these files need formatting (run make fmt):"; echo "$$unformatted"; exit 1; \
	fi
	$(GO) vet ./...

fmt:
	gofmt -w .

clean:
	rm -rf bin
