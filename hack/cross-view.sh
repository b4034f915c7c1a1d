#!/usr/bin/env bash
# cross-view.sh: the outside view checked on a kstep cluster (issue 21).
# N times: a process run of the profile, then an external run against a
# fresh `kstep up -d --profile` cluster (the same cluster, bench.ClusterSpec),
# taken down after it; then `kstep compare` of the two sets, both ways.
# Exit status: compare's, the worse of the two directions.
#
#   hack/cross-view.sh [OUT]       # default OUT=/tmp/kstep-cross-view
#
# Environment: KSTEP=bin/kstep, PROFILE=bench/profiles/outside-view.yaml,
# N=5 (runs a side), UP_ARGS (extra `kstep up` flags, e.g. --supervise).
set -uo pipefail
B=${KSTEP:-bin/kstep}
P=${PROFILE:-bench/profiles/outside-view.yaml}
N=${N:-5}
OUT=${1:-/tmp/kstep-cross-view}
mkdir -p "$OUT/logs"
for i in $(seq -w 1 "$N"); do
  echo "== $(date -u +%T) run $i: process (load $(cut -d' ' -f1-3 /proc/loadavg))"
  "$B" bench --profile "$P" --provider process --out "$OUT/process/run-$i" --no-progress >"$OUT/logs/process-$i.log" 2>&1
  echo "   exit $?"
  st="$OUT/cluster-$i"
  echo "== $(date -u +%T) run $i: external (load $(cut -d' ' -f1-3 /proc/loadavg))"
  # shellcheck disable=SC2086
  if "$B" up -d --state-dir "$st" --profile "$P" ${UP_ARGS:-} >"$OUT/logs/up-$i.log" 2>&1; then
    "$B" bench --profile "$P" --provider external --kubeconfig "$st/kubeconfig" --out "$OUT/external/run-$i" --no-progress >"$OUT/logs/external-$i.log" 2>&1
    echo "   exit $?"
  else
    echo "   kstep up failed: $OUT/logs/up-$i.log"
  fi
  "$B" down --state-dir "$st" --purge >"$OUT/logs/down-$i.log" 2>&1
done
rc=0
"$B" compare "$OUT/process" "$OUT/external"; r=$?; echo "kstep compare process external: exit $r"; ((r > rc)) && rc=$r
"$B" compare "$OUT/external" "$OUT/process"; r=$?; echo "kstep compare external process: exit $r"; ((r > rc)) && rc=$r
exit $rc
