#!/usr/bin/env bash
# conformance.sh: upstream Kubernetes' [Conformance] specs against a kstep
# cluster, held against test/conformance/known-failures.txt (issue 46).
# `make conformance` runs it; `make nightly` runs it through .ci/nightly;
# never `make test` (it takes tens of minutes).
#
#   hack/conformance.sh build   # build upstream's e2e.test (and ginkgo) into $CACHE, once
#   hack/conformance.sh run     # build if needed, `kstep up -d` a cluster with hollow nodes,
#                               # run the specs, compare (hack/conformance), `kstep down`
#
# The specs: every [Conformance] spec of e2e.test, less the skip list
# (test/conformance/skips.txt, each area with its reason), ANDed with
# $FOCUS when given. The verdict is hack/conformance's: exit 0 when every
# failure is on the known-failures list, 1 on a failure not on it or a
# listed spec that passed (the list only shrinks), 2 on a bad list, 3 when
# no verdict is possible (the build, the cluster or the suite's setup failed).
#
# Environment:
#   K8S_VERSION=v1.37.2        k8s.io/kubernetes from the Go module proxy (staging modules at v0.<minor>.<patch>)
#   CACHE=$HOME/.cache/kstep-conformance/$K8S_VERSION
#                              the throwaway module, e2e.test and ginkgo; outside the tree: upstream code is never committed
#   KSTEP=bin/kstep            the kstep binary
#   PROVIDER=process           kstep up's provider (process, docker or auto)
#   HOLLOW_NODES=3             hollow nodes `kstep up` starts (upstream's specs want at least two schedulable nodes)
#   FOCUS                      a regexp the spec's full name must also match (e.g. 'Watchers|Garbage collector')
#   PROCS=4                    ginkgo's parallel processes ([Serial] specs still run alone, last); 1 runs e2e.test without ginkgo's CLI
#   TIMEOUT=40m                the suite's cap (ginkgo's --timeout): specs not started by then do not run, and the gate fails
#   KNOWN, SKIPS               the lists (default test/conformance/known-failures.txt, skips.txt)
#   OUT=results/conformance/<UTC stamp>
#                              report.json (ginkgo's), outcomes.txt, summary.txt, e2e.log, the cluster's logs on failure,
#                              known-failures.draft.txt (the failed-new specs in the list's format, to give reasons and add)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
K8S_VERSION=${K8S_VERSION:-v1.37.2}
CACHE=${CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kstep-conformance/$K8S_VERSION}
KSTEP=${KSTEP:-$ROOT/bin/kstep}
PROVIDER=${PROVIDER:-process}
HOLLOW_NODES=${HOLLOW_NODES:-3}
FOCUS=${FOCUS:-}
PROCS=${PROCS:-4}
TIMEOUT=${TIMEOUT:-40m}
OUT=${OUT:-$ROOT/results/conformance/$(date -u +%Y%m%d-%H%M%S)}
KNOWN=${KNOWN:-$ROOT/test/conformance/known-failures.txt}
SKIPS=${SKIPS:-$ROOT/test/conformance/skips.txt}
E2E=$CACHE/e2e.test GINKGO=$CACHE/ginkgo

log() { echo "conformance: $*" >&2; }

# build: a throwaway module requiring k8s.io/kubernetes, with every staging
# module replaced by its published version (upstream's go.mod replaces them
# with ./staging/src/... directories, which a module download lacks), as
# hack/upstream-trial.sh builds the control plane; then `go test -c` of
# k8s.io/kubernetes/test/e2e. tools.go imports what e2e_test.go imports so
# that `go mod tidy` records their modules.
build() {
	if [[ -x $E2E && -x $GINKGO ]]; then return; fi
	mkdir -p "$CACHE/mod"
	(
		# one build at a time per cache (a second waits, then finds the binaries)
		exec 9>"$CACHE/build.lock"
		flock 9
		if [[ -x $E2E && -x $GINKGO ]]; then exit; fi
		export GOFLAGS=-mod=mod
		cd "$CACHE/mod"
		if [[ -x $E2E ]]; then build_ginkgo; exit; fi
		local staging=v0.${K8S_VERSION#v1.} dir mod
		dir=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
		mod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
		local replaces="" m
		rm -f go.mod go.sum
		for m in $(awk '/=> \.\/staging\//{print $1}' "$mod"); do
			if (cd / && go list -m "$m@$staging") >/dev/null 2>&1; then replaces+=$(printf '\t%s => %s %s' "$m" "$m" "$staging")$'\n'; fi
		done
		printf 'module kstepconformance\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n%s)\n' "$K8S_VERSION" "$replaces" >go.mod
		# the packages e2e_test.go imports (its test-only imports are not in
		# a dependency's `all` otherwise)
		{
			printf '//go:build tools\n\npackage tools\n\nimport (\n'
			sed -n '/^import (/,/^)/p' "$dir/test/e2e/e2e_test.go" | grep -o '"[^"]*\.[^"]*/[^"]*"' | sort -u | sed 's/^/\t_ /'
			printf ')\n'
		} >tools.go
		log "go mod tidy (k8s.io/kubernetes $K8S_VERSION, staging $staging)"
		nice -n 19 go mod tidy
		log "building e2e.test (go test -c k8s.io/kubernetes/test/e2e, nice 19; ~15+ min on 2 cores)"
		local v=k8s.io/component-base/version
		nice -n 19 go test -c -o "$E2E.tmp" \
			-ldflags "-X $v.gitVersion=$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$(echo "$K8S_VERSION" | cut -d. -f2)" \
			k8s.io/kubernetes/test/e2e
		mv "$E2E.tmp" "$E2E"
		build_ginkgo
	)
	log "built $E2E and $GINKGO"
}

# build_ginkgo: ginkgo's CLI at the version e2e.test links (the module's
# requirement), to run the specs in parallel processes.
build_ginkgo() {
	log "building ginkgo (the CLI of github.com/onsi/ginkgo/v2 $(go list -m -f '{{.Version}}' github.com/onsi/ginkgo/v2))"
	nice -n 19 go build -o "$GINKGO" github.com/onsi/ginkgo/v2/ginkgo
}

# run: a cluster, the specs, the verdict. The cluster goes down on any exit.
run() {
	build || { log "the build failed"; exit 3; }
	[[ -x $KSTEP ]] || { log "no kstep binary at $KSTEP (make build)"; exit 3; }
	local skip verdict_bin=$OUT/conformance
	mkdir -p "$OUT"
	# built, not `go run`: go run ends 1 whatever the verdict's exit code
	(cd "$ROOT" && go build -o "$verdict_bin" ./hack/conformance) || { log "hack/conformance does not build"; exit 3; }
	skip=$("$verdict_bin" skip -skips "$SKIPS") || exit 2
	local state=$OUT/cluster
	log "kstep up -d --provider $PROVIDER --hollow-nodes $HOLLOW_NODES --state-dir $state"
	# shellcheck disable=SC2064 # the state directory is fixed now
	trap "'$KSTEP' down --state-dir '$state' >&2 || true" EXIT
	local kubeconfig
	kubeconfig=$("$KSTEP" up -d --provider "$PROVIDER" --hollow-nodes "$HOLLOW_NODES" --state-dir "$state" | sed -n 's/^KUBECONFIG=//p' | tail -1) ||
		{ log "kstep up failed (its logs: $state)"; exit 3; }
	[[ -n $kubeconfig ]] || { log "kstep up printed no KUBECONFIG"; exit 3; }

	# e2e.test's own flags: the cluster, no provider (skeleton), no log
	# gathering over ssh, every report in $OUT.
	local e2eflags=(--kubeconfig="$kubeconfig" --provider=skeleton --report-dir="$OUT" --disable-log-dump
		--e2e-output-dir="$OUT" --allowed-not-ready-nodes=0 --node-schedulable-timeout=5m)
	local focus='\[Conformance\]'
	[[ -n $FOCUS ]] && focus="(?:$FOCUS).*\[Conformance\]|\[Conformance\].*(?:$FOCUS)"
	log "running [Conformance] specs (focus '$focus', $PROCS processes, cap $TIMEOUT); log $OUT/e2e.log"
	local start=$SECONDS
	if ((PROCS > 1)); then
		"$GINKGO" --procs="$PROCS" --timeout="$TIMEOUT" --focus="$focus" --skip="$skip" \
			--json-report=report.json --output-dir="$OUT" --no-color --silence-skips \
			"$E2E" -- "${e2eflags[@]}" >"$OUT/e2e.log" 2>&1 || true
	else
		"$E2E" --ginkgo.timeout="$TIMEOUT" --ginkgo.focus="$focus" --ginkgo.skip="$skip" \
			--ginkgo.json-report="$OUT/report.json" --ginkgo.no-color --ginkgo.silence-skips \
			"${e2eflags[@]}" >"$OUT/e2e.log" 2>&1 || true
	fi
	log "the suite took $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s"

	local verdict
	set +e
	"$verdict_bin" compare -known "$KNOWN" -outcomes "$OUT/outcomes.txt" -draft "$OUT/known-failures.draft.txt" "$OUT/report.json" | tee "$OUT/summary.txt"
	verdict=${PIPESTATUS[0]}
	set -e
	if ((verdict == 0)); then
		"$KSTEP" down --state-dir "$state" --purge >&2 || true
		trap - EXIT
	else
		log "the cluster's logs stay in $state"
	fi
	exit "$verdict"
}

case ${1:-} in
build) build ;;
run) run ;;
*)
	echo "usage: $0 build|run" >&2
	exit 2
	;;
esac
