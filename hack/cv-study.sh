#!/usr/bin/env bash
# cv-study.sh: where a set's run-to-run noise goes with the noise cuts
# (issue 48 item 1). N times, alternately (so the machine's drift falls on
# both alike): one run "before" (BEFORE_ARGS, default: the profile's
# defaults) and one run "after" (AFTER_ARGS, default: the quick profile's
# first 20 objects left out as warm-up). Then each row's
# run-to-run coefficient of variation of p50 and p99 on each side, from
# `kstep compare --force --json` (forced: the two sides are measured
# differently on purpose).
#
#   hack/cv-study.sh [OUT]          # default OUT=/tmp/kstep-cv-study
#   make cv-study                   # the same, N=10
#
# Environment: KSTEP=bin/kstep, PROFILE=quick, PROVIDER=process, N=5,
# BEFORE_ARGS="", AFTER_ARGS="--warm-up-objects 20" (add e.g. --actor-cpus 1).
# Exit status: 0 when every run was valid, 1 otherwise (the table is
# printed either way).
set -uo pipefail
B=${KSTEP:-bin/kstep}
P=${PROFILE:-quick}
PROV=${PROVIDER:-process}
N=${N:-5}
BEFORE_ARGS=${BEFORE_ARGS-}
AFTER_ARGS=${AFTER_ARGS---warm-up-objects 20}
OUT=${1:-/tmp/kstep-cv-study}
if [ -e "$OUT/before" ] || [ -e "$OUT/after" ]; then
  echo "cv-study: $OUT already holds a study; give another OUT" >&2
  exit 2
fi
mkdir -p "$OUT/logs"
rc=0
for i in $(seq -w 1 "$N"); do
  for side in before after; do
    args=$BEFORE_ARGS
    [ "$side" = after ] && args=$AFTER_ARGS
    echo "== $(date -u +%T) run $i $side ($args) load $(cut -d' ' -f1-3 /proc/loadavg)"
    # shellcheck disable=SC2086
    "$B" bench --profile "$P" --provider "$PROV" --no-progress --out "$OUT/$side/run-$i" $args >"$OUT/logs/$side-$i.log" 2>&1
    r=$?
    echo "   exit $r"
    ((r != 0)) && rc=1
  done
done
"$B" compare --force --json "$OUT/before" "$OUT/after" >"$OUT/compare.json" 2>"$OUT/logs/compare.err"
echo
echo "run-to-run CV of each row's per-run p50 and p99, in percent ($N runs a side; $P on $PROV)"
echo "before: ${BEFORE_ARGS:-(defaults)}    after: ${AFTER_ARGS:-(defaults)}"
jq -r '["step","transition","nodes","runs b/a","p50 CV before","p50 CV after","p99 CV before","p99 CV after"],
  (.deltas[] | [.step, .name, .nodes, "\(.base_n)/\(.new_n)",
    (.base_p50_cv_pct*10|round/10), (.new_p50_cv_pct*10|round/10), (.base_p99_cv_pct*10|round/10), (.new_p99_cv_pct*10|round/10)])
  | @tsv' "$OUT/compare.json" | column -t -s $'\t'
jq -r '"median over rows: p50 CV before \([.deltas[].base_p50_cv_pct]|sort|.[length/2|floor]*10|round/10) %, after \([.deltas[].new_p50_cv_pct]|sort|.[length/2|floor]*10|round/10) %"' "$OUT/compare.json"
exit $rc
