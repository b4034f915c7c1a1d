#!/usr/bin/env bash
# etcd-floor.sh: what etcd alone costs per write on this machine, the floor
# under every write path that uses it (issue 22's targets are judged
# against it). Three `kstep etcd` members on 127.0.0.1 (GOMAXPROCS 1 each,
# as kstep's clusters run them; PROCS=2 to give each both cores), then
# hack/etcdfloor's creates (20,000 of 1.8 KB, 100 in flight); prints
# creates per second and the members' CPU per create, read from /proc.
# A developer's measurement: nothing in make or CI runs it.
#
#   hack/etcd-floor.sh            # KSTEP=bin/kstep, PROCS=1, N=20000, CONCURRENCY=100, SIZE=1800
set -euo pipefail
cd "$(dirname "$0")/.."
KSTEP=${KSTEP:-bin/kstep} PROCS=${PROCS:-1} N=${N:-20000} CONCURRENCY=${CONCURRENCY:-100} SIZE=${SIZE:-1800}
PORT_BASE=${PORT_BASE:-42000}
dir=$(mktemp -d /tmp/etcd-floor.XXXXXX)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
go build -o "$dir/etcdfloor" ./hack/etcdfloor
initial="" endpoints=""
for i in 0 1 2; do
	initial+="${initial:+,}m$i=http://127.0.0.1:$((PORT_BASE + 380 + 10 * i))"
	endpoints+="${endpoints:+,}http://127.0.0.1:$((PORT_BASE + 379 + 10 * i))"
done
for i in 0 1 2; do
	c=$((PORT_BASE + 379 + 10 * i)) p=$((PORT_BASE + 380 + 10 * i))
	GOMAXPROCS=$PROCS "$KSTEP" etcd --name "m$i" --data-dir "$dir/m$i" \
		--listen-client-urls "http://127.0.0.1:$c" --advertise-client-urls "http://127.0.0.1:$c" \
		--listen-peer-urls "http://127.0.0.1:$p" --initial-advertise-peer-urls "http://127.0.0.1:$p" \
		--initial-cluster "$initial" >"$dir/m$i.log" 2>&1 &
	pids+=($!)
done
for i in 0 1 2; do
	for _ in $(seq 30); do
		curl -sf "http://127.0.0.1:$((PORT_BASE + 379 + 10 * i))/health" >/dev/null && break
		sleep 1
	done
done
sleep 3 # the members' start-up settles
ticks() { local s=0 p; for p in "${pids[@]}"; do s=$((s + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo "$s"; }
hz=$(getconf CLK_TCK)
before=$(ticks)
"$dir/etcdfloor" -endpoints "$endpoints" -n "$N" -concurrency "$CONCURRENCY" -value-bytes "$SIZE"
after=$(ticks)
awk -v t=$((after - before)) -v hz="$hz" -v n="$N" -v procs="$PROCS" 'BEGIN { ms = t * 1000 / hz;
	printf "the three members: %.0f ms of CPU, %.3f core-ms per create (GOMAXPROCS %s each)\n", ms, ms / n, procs }'
