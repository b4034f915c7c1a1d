#!/usr/bin/env bash
# etcd-floor.sh: what etcd alone costs per write on this machine, the floor
# under every write path that uses it (issue 22's targets are judged
# against it). The three etcd members of `kstep up --apiservers 0` (kstep
# up's own etcd, as every cluster runs it: behind TLS with client and peer
# certificates, GOMAXPROCS 1 each; PROCS=2 gives each both cores; TLS=0
# runs `kstep up --insecure`'s plain etcd instead, to measure what TLS
# costs), then hack/etcdfloor's creates (20,000 of 1.8 KB, 100 in flight)
# with the operator certificate kstep up prints (ETCDCTL_CACERT, _CERT,
# _KEY); prints creates per second and the members' CPU per create, read
# from /proc. A developer's measurement: nothing in make or CI runs it.
#
#   hack/etcd-floor.sh            # KSTEP=bin/kstep, PROCS=1, TLS=1, N=20000, CONCURRENCY=100, SIZE=1800
set -euo pipefail
cd "$(dirname "$0")/.."
KSTEP=${KSTEP:-bin/kstep} PROCS=${PROCS:-1} TLS=${TLS:-1} N=${N:-20000} CONCURRENCY=${CONCURRENCY:-100} SIZE=${SIZE:-1800}
dir=$(mktemp -d /tmp/etcd-floor.XXXXXX)
state="$dir/state"
cleanup() { "$KSTEP" down --state-dir "$state" --purge >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT
go build -o "$dir/etcdfloor" ./hack/etcdfloor
insecure=()
if [ "$TLS" = 0 ]; then insecure=(--insecure); fi
"$KSTEP" up -d --state-dir "$state" --etcd-members 3 --apiservers 0 --controller-managers 0 --schedulers 0 \
	--actor-procs "$PROCS" --supervise=false ${insecure[@]+"${insecure[@]}"} >"$dir/up.txt" 2>"$dir/up.log" ||
	{ cat "$dir/up.log" "$dir/up.txt" >&2; exit 1; }
# kstep up's table (ACTOR ROLE ENDPOINT PID LOG), then ETCDCTL_* lines.
mapfile -t pids < <(awk '$2 == "etcd" { print $4 }' "$dir/up.txt")
endpoints=$(sed -n 's/^ETCDCTL_ENDPOINTS=//p' "$dir/up.txt")
for v in CACERT CERT KEY; do
	val=$(sed -n "s/^ETCDCTL_$v=//p" "$dir/up.txt")
	if [ -n "$val" ]; then export "ETCDCTL_$v=$val"; fi
done
if [ "${#pids[@]}" != 3 ] || [ -z "$endpoints" ]; then
	echo "etcd-floor: kstep up printed no three etcd members:" >&2
	cat "$dir/up.txt" >&2
	exit 1
fi
case "$endpoints" in https://*) echo "etcd behind TLS (client certificates): $endpoints" ;; *) echo "plain etcd: $endpoints" ;; esac
sleep 3 # the members' start-up settles
ticks() { local s=0 p; for p in "${pids[@]}"; do s=$((s + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo "$s"; }
hz=$(getconf CLK_TCK)
before=$(ticks)
"$dir/etcdfloor" -endpoints "$endpoints" -n "$N" -concurrency "$CONCURRENCY" -value-bytes "$SIZE"
after=$(ticks)
awk -v t=$((after - before)) -v hz="$hz" -v n="$N" -v procs="$PROCS" -v tls="$TLS" 'BEGIN { ms = t * 1000 / hz;
	printf "the three members: %.0f ms of CPU, %.3f core-ms per create (GOMAXPROCS %s each, TLS=%s)\n", ms, ms / n, procs, tls }'
