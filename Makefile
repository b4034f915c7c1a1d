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

# The node's parts (containerd, its runc shim, runc, the CNI plugins) are
# built from the Go modules pinned in tools/go.mod and tools/go.sum, so a real
# node depends on nothing from the host distribution. Each is rebuilt only
# when missing or when the tools module changes.
TOOLS_MOD     := tools/go.mod tools/go.sum
CONTAINERD    := github.com/containerd/containerd/v2
CNI_PLUGINS   := github.com/containernetworking/plugins
RUNC          := github.com/opencontainers/runc
tools_version  = $(shell awk '$$1 == "$(1)" { print $$2; exit }' tools/go.mod)
NODE_BINS     := $(addprefix bin/,containerd containerd-shim-runc-v2 runc bridge host-local portmap loopback)

.PHONY: all build node-bins image-bins libseccomp test test-times fuzz fuzz-ci bench cv-study bench-api bench-node bench-nodes bench-sched chaos nightly lint fmt clean

all: build

build: node-bins image-bins
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/kstep

node-bins: $(NODE_BINS)

# containerd with its CRI plugin, and the shim that drives runc. Static, no
# cgo. The longest build here: minutes on 2 cores the first time.
bin/containerd bin/containerd-shim-runc-v2 &: $(TOOLS_MOD)
	cd tools && CGO_ENABLED=0 $(GO) build -trimpath -tags "no_btrfs netgo osusergo" \
		-ldflags "-s -w -X $(CONTAINERD)/version.Version=$(call tools_version,$(CONTAINERD)) -X $(CONTAINERD)/version.Package=$(CONTAINERD)" \
		-o ../bin/ $(CONTAINERD)/cmd/containerd $(CONTAINERD)/cmd/containerd-shim-runc-v2
	touch bin/containerd bin/containerd-shim-runc-v2

# runc WITH seccomp: a seccomp-less runc fails every container that asks for
# the RuntimeDefault profile. cgo against a static libseccomp.
bin/runc: $(TOOLS_MOD) | libseccomp
	cd tools && CGO_ENABLED=1 $(GO) build -trimpath -tags "seccomp urfave_cli_no_docs netgo osusergo" \
		-ldflags "-s -w -extldflags -static" -o ../bin/runc $(RUNC)
	touch bin/runc

# The CNI plugins of the pod network: bridge + host-local IPAM, portmap, loopback.
bin/bridge bin/host-local bin/portmap bin/loopback &: $(TOOLS_MOD)
	cd tools && CGO_ENABLED=0 $(GO) build -trimpath \
		-ldflags "-s -w -X $(CNI_PLUGINS)/pkg/utils/buildversion.BuildVersion=$(call tools_version,$(CNI_PLUGINS))" \
		-o ../bin/ $(CNI_PLUGINS)/plugins/main/bridge $(CNI_PLUGINS)/plugins/ipam/host-local \
		$(CNI_PLUGINS)/plugins/meta/portmap $(CNI_PLUGINS)/plugins/main/loopback
	touch bin/bridge bin/host-local bin/portmap bin/loopback

# libseccomp's headers and static library, for runc. Installed from Debian's
# packages when missing and we are root; otherwise say what to install.
libseccomp:
	@if [ ! -f /usr/include/seccomp.h ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "make: installing libseccomp-dev (runc is built with seccomp)"; \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q libseccomp-dev >/dev/null || \
			{ DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null && \
			  DEBIAN_FRONTEND=noninteractive apt-get install -y -q libseccomp-dev >/dev/null; }; \
		else \
			echo "make: runc needs libseccomp-dev: apt-get install -y libseccomp-dev" >&2; exit 1; \
		fi; \
	fi

# The pause and workload programs that cluster/images wraps into images.
image-bins:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o bin/ ./cmd/kstep-pause ./cmd/kstep-app

# Every test of make test's tier (docs/testing.md: a test of another tier
# skips itself), then every fuzz target of the apiserver's decode path for
# 30 s (the first fuzz build instruments the apiserver's test binary).
# Budget: 20 minutes on 2 cores. test/e2e is named first: go test starts
# packages in the order given, and e2e, the longest (its clusters two at
# a time, docs/testing.md), then runs from the first minutes beside the
# others instead of after them.
TEST_PKGS := ./test/e2e/ ./...
test: build
	KSTEP_BIN=$(KSTEP_BIN) KSTEP_TIER=test $(GO) test -count=1 -timeout 45m $(TEST_PKGS)
	$(MAKE) fuzz-ci

# make test's Go tests through `go test -json`, then where the time went:
# the 30 slowest tests and every package's wall time (hack/testtimes). The
# event stream stays in TEST_JSON.
TEST_JSON ?= /tmp/kstep-test.json
test-times: build
	KSTEP_BIN=$(KSTEP_BIN) KSTEP_TIER=test $(GO) test -count=1 -timeout 45m -json $(TEST_PKGS) > $(TEST_JSON); \
		status=$$?; $(GO) run ./hack/testtimes -n 30 $(TEST_JSON); exit $$status

# Fuzz the apiserver's decode path (JSON, YAML, protobuf bodies, the three
# patch kinds, label and field selectors): every Fuzz* target for FUZZTIME
# each. fuzz-ci is the 30 s-per-target run make test and CI do.
FUZZTIME ?= 5m
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) .ci/fuzz

fuzz-ci:
	GO=$(GO) FUZZTIME=30s .ci/fuzz

# The main job: the step harness on the quick profile (200 ReplicaSets on 2
# real nodes when possible + 50 hollow); the run lands in results/runs/.
bench: build
	$(BIN) bench --profile quick

# The noise study of issue 48: N runs of the quick profile before and after
# the noise cuts, alternately, and each row's run-to-run CV on each side
# (hack/cv-study.sh; N, BEFORE_ARGS, AFTER_ARGS, CV_STUDY_OUT settable).
CV_STUDY_OUT ?= results/cv-study-$(shell date +%Y%m%d-%H%M%S)
cv-study: build
	N=$${N:-10} KSTEP=$(BIN) hack/cv-study.sh $(CV_STUDY_OUT)

# The apiserver's benchmarks: creates/s and latency through one apiserver on
# a 3-member etcd (real processes), watch fan-out to 1,000 watchers, and the
# in-process micro-benchmarks of the apiserver's packages.
bench-api: build
	KSTEP_BIN=$(KSTEP_BIN) $(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) ./test/bench/
	$(GO) test -run '^$$' -bench . -benchmem ./cluster/apiserver/... ./cluster/storage/...

# CRI latency floor of one real node (root, Linux): RunPodSandbox,
# CreateContainer and StartContainer p50 over 20 pods on a warm image.
bench-node: build
	KSTEP_BIN=$(KSTEP_BIN) $(GO) test -run '^$$' -bench . -benchtime 1x -timeout 20m ./cluster/node/

# Nodes: the CRI floor of a real node (root), then hollow nodes per GiB and
# pods/s to Ready on the simulated runtime.
bench-nodes: bench-node
	$(GO) test -run '^$$' -bench 'HollowNodeHeap' -benchtime 1x ./cluster/kubelet/
	$(GO) test -run '^$$' -bench 'PodsToReady' -benchtime 2000x ./cluster/kubelet/

# The scheduler: pods/s with 10,000 pods on 500 and on 5,000 nodes.
bench-sched:
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 30m ./cluster/scheduler/

# The chaos suite: every built-in scenario (one per row of the seed's
# failure table, plus etcd leader partition, quorum loss and an apiserver
# restart under watch-heavy load) against the strict default gate. Exit 1
# when a gate line fails; the runs land in results/runs/.
chaos: build
	$(BIN) chaos --scenario all --gate default

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

# Upstream's [Conformance] specs against a kstep cluster with hollow nodes
# (hack/conformance.sh): k8s.io/kubernetes v1.37.2's e2e.test, built once
# from the Go module proxy into ~/.cache/kstep-conformance (never into the
# tree), run against `kstep up -d`, held against
# test/conformance/known-failures.txt. Exit 1 on a failure not on the list
# or a listed spec that passes; the run lands in results/conformance/.
# Budget: 40 minutes on 2 cores (its TIMEOUT), plus the first build.
.PHONY: conformance
conformance: build
	KSTEP=$(KSTEP_BIN) hack/conformance.sh run

# The nightly job, and everything .github/workflows/nightly.yml runs: the
# harness's self-check (compare passes the same build and flags a 5 ms
# binding delay), the nightly profile as a set of 5 runs, compare against the
# baseline set, the history report (.ci/nightly; NIGHTLY_* variables there).
nightly: build
	KSTEP_BIN=$(KSTEP_BIN) GO=$(GO) .ci/nightly
