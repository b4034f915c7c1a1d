#!/usr/bin/env bash
# upstream-trial.sh: bring an upstream Kubernetes control plane up on
# loopback, to point `kstep bench|chaos --provider external` at (issue 21).
# A manual trial for a developer's machine; it must never run in CI (it
# refuses when $CI is set) and nothing in make or .github calls it.
#
#   hack/upstream-trial.sh build   # build the binaries into $UP/bin (reused when present)
#   hack/upstream-trial.sh up      # build if needed, then etcd, kube-apiserver, kube-controller-manager,
#                                  # kube-scheduler and $NODES_COUNT nodes; prints the admin kubeconfig
#   hack/upstream-trial.sh down    # stop everything `up` started (by the pids it recorded)
#
# Environment:
#   UP=/work/upstream          working directory (binaries in $UP/bin, cluster state in $UP/run)
#   K8S_VERSION=v1.37.2        k8s.io/kubernetes from the Go module proxy (staging modules at v0.<minor>.<patch>)
#   KWOK_VERSION=v0.8.0        sigs.k8s.io/kwok/cmd/kwok from the Go module proxy
#   NODES=kwok|hollow          the node fleet: kwok's fake nodes (default), or kstep's hollow kubelets
#                              (`kstep hollow-nodes`, needs KSTEP=path/to/kstep)
#   NODES_COUNT=10
#   API_QPS=1000               the controller-manager's and scheduler's client QPS and burst (their defaults, 20 and
#                              50, would cap a saturation run at the clients, not at the control plane)
#   ETCD_MEMBERS=1             etcd members (3: the Raft cluster kstep's profiles run)
#   KSTEP=bin/kstep            the kstep binary: runs the etcd member (`kstep etcd`, plain embed etcd)
#                              and, with NODES=hollow, the nodes
#   PORT_BASE=32000            etcd client +379, peer +380 (member i: +10i), apiserver +443, kcm +257, scheduler +259, kwok +247
#
# Everything listens on 127.0.0.1; builds run under `nice -n 19`. Then e.g.:
#   bin/kstep bench --provider external --kubeconfig $UP/run/admin.kubeconfig --profile quick
#   bin/kstep chaos --provider external --kubeconfig $UP/run/admin.kubeconfig \
#       --scenario api-drain-delete-node --allow-disruption
#   bin/kstep clean --kubeconfig $UP/run/admin.kubeconfig
set -euo pipefail

if [[ -n "${CI:-}" || -n "${GITHUB_ACTIONS:-}" ]]; then
	echo "upstream-trial.sh: not in CI (it builds Kubernetes from source and runs a cluster)" >&2
	exit 2
fi

UP=${UP:-/work/upstream}
K8S_VERSION=${K8S_VERSION:-v1.37.2}
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
NODES=${NODES:-kwok}
NODES_COUNT=${NODES_COUNT:-10}
ETCD_MEMBERS=${ETCD_MEMBERS:-1}
API_QPS=${API_QPS:-1000}
KSTEP=${KSTEP:-$(cd "$(dirname "$0")/.." && pwd)/bin/kstep}
PORT_BASE=${PORT_BASE:-32000}
ETCD_PORT=$((PORT_BASE + 379)) ETCD_PEER=$((PORT_BASE + 380)) API_PORT=$((PORT_BASE + 443))
KCM_PORT=$((PORT_BASE + 257)) SCHED_PORT=$((PORT_BASE + 259)) KWOK_PORT=$((PORT_BASE + 247))
BIN=$UP/bin RUN=$UP/run
export GOFLAGS=-mod=mod

log() { echo "upstream-trial: $*" >&2; }

# build: a throwaway module requiring k8s.io/kubernetes, with every staging
# module replaced by its published version (upstream's go.mod replaces them
# with ./staging/src/... directories, which a module download lacks).
build() {
	mkdir -p "$BIN" "$UP/k8s"
	local staging=v0.${K8S_VERSION#v1.}
	if [[ ! -x $BIN/kube-apiserver || ! -x $BIN/kube-controller-manager || ! -x $BIN/kube-scheduler ]]; then
		(
			cd "$UP/k8s"
			local mod
			mod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
			# every staging module upstream replaces, at its published version
			# (asked before go.mod is written: go list fails in a directory
			# whose go.mod is half written)
			local replaces="" m
			rm -f go.mod
			for m in $(awk '/=> \.\/staging\//{print $1}' "$mod"); do
				if (cd / && go list -m "$m@$staging") >/dev/null 2>&1; then replaces+=$(printf '\t%s => %s %s' "$m" "$m" "$staging")$'\n'; fi
			done
			printf 'module upstreamtrial\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n%s)\n' "$K8S_VERSION" "$replaces" >go.mod
			printf '//go:build tools\n\npackage tools\n\nimport (\n\t_ "k8s.io/kubernetes/cmd/kube-apiserver"\n\t_ "k8s.io/kubernetes/cmd/kube-controller-manager"\n\t_ "k8s.io/kubernetes/cmd/kube-scheduler"\n)\n' >tools.go
			log "go mod tidy (k8s.io/kubernetes $K8S_VERSION, staging $staging)"
			nice -n 19 go mod tidy
			log "building kube-apiserver, kube-controller-manager, kube-scheduler (nice 19)"
			# a module build has no git tree to stamp /version from: say it
			local v=k8s.io/component-base/version
			nice -n 19 go build -ldflags "-X $v.gitVersion=$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$(echo "$K8S_VERSION" | cut -d. -f2)" \
				-o "$BIN/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler
		)
	fi
	if [[ $NODES == kwok && ! -x $BIN/kwok ]]; then
		log "building kwok $KWOK_VERSION (nice 19)"
		GOBIN=$BIN nice -n 19 go install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
	fi
}

pki() {
	local d=$RUN/pki
	[[ -f $d/admin.crt ]] && return
	mkdir -p "$d"
	(
		cd "$d"
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.crt -days 7 -subj "/CN=upstream-trial-ca" 2>/dev/null
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout apiserver.key -out apiserver.csr -subj "/CN=kube-apiserver" 2>/dev/null
		printf 'subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n' >apiserver.ext
		openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 7 -extfile apiserver.ext -out apiserver.crt 2>/dev/null
		# client certificates: the subject's CN is the user, O the group
		client admin "/O=system:masters/CN=kstep-trial-admin"
		client controller-manager "/CN=system:kube-controller-manager"
		client scheduler "/CN=system:kube-scheduler"
		openssl genrsa -out sa.key 2048 2>/dev/null
		openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
	)
	for f in admin controller-manager scheduler; do
		cat >"$RUN/$f.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: upstream-trial
  cluster: {server: "https://127.0.0.1:$API_PORT", certificate-authority: "$d/ca.crt"}
users:
- name: $f
  user: {client-certificate: "$d/$f.crt", client-key: "$d/$f.key"}
contexts:
- name: upstream-trial
  context: {cluster: upstream-trial, user: $f}
current-context: upstream-trial
EOF
	done
}

client() { # file subject: a client certificate signed by the CA (in the pki directory)
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
	printf 'extendedKeyUsage=clientAuth\n' >client.ext
	openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 7 -extfile client.ext -out "$1.crt" 2>/dev/null
}

start() { # name cmd...: runs it in the background, logs to $RUN/<name>.log, records the pid
	local name=$1
	shift
	if [[ -f $RUN/$name.pid ]] && kill -0 "$(cat "$RUN/$name.pid")" 2>/dev/null; then
		log "$name runs already (pid $(cat "$RUN/$name.pid"))"
		return
	fi
	"$@" >"$RUN/$name.log" 2>&1 &
	echo "$!" >"$RUN/$name.pid"
	log "started $name (pid $!, log $RUN/$name.log)"
}

wait_for() { # what seconds cmd...
	local what=$1 secs=$2
	shift 2
	for _ in $(seq "$secs"); do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 1
	done
	log "$what did not come up in ${secs}s"
	return 1
}

api() { # path: GET on the apiserver as admin
	curl -sf --cacert "$RUN/pki/ca.crt" --cert "$RUN/pki/admin.crt" --key "$RUN/pki/admin.key" "https://127.0.0.1:$API_PORT$1"
}

# leases: the controller-manager and scheduler just started lead. After a
# restart the old processes' Leases stay held until they expire (15 s; they
# are not released on SIGTERM): a load started before would see the
# leaders change hands (kstep bench marks that run disrupted).
leases() {
	grep -q "Successfully acquired lease" "$RUN/kube-controller-manager.log" &&
		grep -q "Successfully acquired lease" "$RUN/kube-scheduler.log"
}

ready_nodes() { # at least $NODES_COUNT nodes with Ready True
	[[ $(api /api/v1/nodes | tr -d ' \n' | grep -o '"type":"Ready","status":"True"' | wc -l) -ge $NODES_COUNT ]]
}

up() {
	build
	mkdir -p "$RUN"
	pki
	local d=$RUN/pki
	# member i listens on client port ETCD_PORT+10i and peer port ETCD_PEER+10i
	local i initial="" servers=""
	for i in $(seq 0 $((ETCD_MEMBERS - 1))); do
		initial+="${initial:+,}trial-$i=http://127.0.0.1:$((ETCD_PEER + 10 * i))"
		servers+="${servers:+,}http://127.0.0.1:$((ETCD_PORT + 10 * i))"
	done
	for i in $(seq 0 $((ETCD_MEMBERS - 1))); do
		local c=$((ETCD_PORT + 10 * i)) p=$((ETCD_PEER + 10 * i))
		start "etcd-$i" "$KSTEP" etcd --name "trial-$i" --data-dir "$RUN/etcd-$i" \
			--listen-client-urls "http://127.0.0.1:$c" --advertise-client-urls "http://127.0.0.1:$c" \
			--listen-peer-urls "http://127.0.0.1:$p" --initial-advertise-peer-urls "http://127.0.0.1:$p" \
			--initial-cluster "$initial"
	done
	for i in $(seq 0 $((ETCD_MEMBERS - 1))); do
		wait_for "etcd-$i" 30 curl -sf "http://127.0.0.1:$((ETCD_PORT + 10 * i))/health"
	done
	start kube-apiserver "$BIN/kube-apiserver" \
		--etcd-servers "$servers" \
		--bind-address 127.0.0.1 --secure-port "$API_PORT" --advertise-address 127.0.0.1 --cert-dir "$RUN/apiserver-certs" \
		--tls-cert-file "$d/apiserver.crt" --tls-private-key-file "$d/apiserver.key" --client-ca-file "$d/ca.crt" \
		--service-account-key-file "$d/sa.pub" --service-account-signing-key-file "$d/sa.key" \
		--service-account-issuer https://kubernetes.default.svc.cluster.local \
		--service-cluster-ip-range 10.96.0.0/16 --authorization-mode Node,RBAC \
		--endpoint-reconciler-type none
	wait_for kube-apiserver 120 api /readyz
	start kube-controller-manager "$BIN/kube-controller-manager" \
		--kubeconfig "$RUN/controller-manager.kubeconfig" \
		--authentication-kubeconfig "$RUN/controller-manager.kubeconfig" --authorization-kubeconfig "$RUN/controller-manager.kubeconfig" \
		--bind-address 127.0.0.1 --secure-port "$KCM_PORT" --leader-elect --kube-api-qps "$API_QPS" --kube-api-burst "$API_QPS" \
		--service-account-private-key-file "$d/sa.key" --root-ca-file "$d/ca.crt" --use-service-account-credentials \
		--cluster-signing-cert-file "$d/ca.crt" --cluster-signing-key-file "$d/ca.key"
	start kube-scheduler "$BIN/kube-scheduler" \
		--kubeconfig "$RUN/scheduler.kubeconfig" \
		--authentication-kubeconfig "$RUN/scheduler.kubeconfig" --authorization-kubeconfig "$RUN/scheduler.kubeconfig" \
		--bind-address 127.0.0.1 --secure-port "$SCHED_PORT" --leader-elect --kube-api-qps "$API_QPS" --kube-api-burst "$API_QPS"
	wait_for "the controller-manager's and scheduler's Leases" 60 leases
	case $NODES in
	kwok) kwok_nodes ;;
	hollow) start hollow-nodes "$KSTEP" hollow-nodes --kubeconfig "$RUN/admin.kubeconfig" --count "$NODES_COUNT" --name-prefix trial-hollow- ;;
	*)
		log "NODES=$NODES: kwok or hollow"
		exit 2
		;;
	esac
	wait_for "$NODES_COUNT Ready nodes" 120 ready_nodes
	log "up: kube-apiserver $(api /version | sed -n 's/.*"gitVersion": "\(.*\)".*/\1/p') on https://127.0.0.1:$API_PORT, $NODES_COUNT $NODES nodes"
	echo "$RUN/admin.kubeconfig"
}

# kwok_nodes: kwok's fast node and pod stages (from its module), and the
# Node objects it manages (kwok creates none itself).
kwok_nodes() {
	local src
	src=$(go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
	{
		for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
			cat "$src/kustomize/stage/$f"
			echo "---"
		done
	} >"$RUN/kwok.yaml"
	start kwok "$BIN/kwok" --kubeconfig "$RUN/admin.kubeconfig" --config "$RUN/kwok.yaml" \
		--manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
		--server-address "127.0.0.1:$KWOK_PORT" --node-ip 127.0.0.1 --cidr 10.244.0.0/16 \
		--node-lease-duration-seconds 40 # the Leases the node lifecycle controller reads (without them, and with
	# the with-lease heartbeat stage, nodes go Unknown after its 50 s grace period)
	local i
	for i in $(seq 0 $((NODES_COUNT - 1))); do
		api_post /api/v1/nodes "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"kwok-node-$i\",\"annotations\":{\"kwok.x-k8s.io/node\":\"fake\",\"node.alpha.kubernetes.io/ttl\":\"0\"},\"labels\":{\"type\":\"kwok\",\"kubernetes.io/hostname\":\"kwok-node-$i\",\"kubernetes.io/os\":\"linux\",\"kubernetes.io/arch\":\"amd64\"}},\"status\":{\"allocatable\":{\"cpu\":\"32\",\"memory\":\"256Gi\",\"pods\":\"110\"},\"capacity\":{\"cpu\":\"32\",\"memory\":\"256Gi\",\"pods\":\"110\"}}}" >/dev/null ||
			log "node kwok-node-$i: create failed (it may exist)"
	done
}

api_post() {
	curl -sf --cacert "$RUN/pki/ca.crt" --cert "$RUN/pki/admin.crt" --key "$RUN/pki/admin.key" \
		-H 'Content-Type: application/json' -X POST --data "$2" "https://127.0.0.1:$API_PORT$1"
}

down() {
	local n
	for n in hollow-nodes kwok kube-scheduler kube-controller-manager kube-apiserver $(cd "$RUN" 2>/dev/null && ls etcd*.pid 2>/dev/null | sed 's/\.pid$//'); do
		[[ -f $RUN/$n.pid ]] || continue
		local pid
		pid=$(cat "$RUN/$n.pid")
		if kill "$pid" 2>/dev/null; then
			for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
			kill -9 "$pid" 2>/dev/null || true
			log "stopped $n (pid $pid)"
		fi
		rm -f "$RUN/$n.pid"
	done
}

case ${1:-} in
build) build ;;
up) up ;;
down) down ;;
*)
	echo "usage: $0 build|up|down" >&2
	exit 2
	;;
esac
