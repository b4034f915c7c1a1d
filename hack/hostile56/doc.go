// Command hostile56 reproduces every numbered finding of issue 56 against
// a running kstep cluster, as the hostile user of the issue would: alice, a
// client certificate it mints from the state directory's CA with a Role
// over pods (and their log, exec, attach, portforward and eviction
// subresources), ConfigMaps and PodDisruptionBudgets in one namespace of
// its own (h56-<unix time>), and the admin of the kubeconfig where the
// issue used the admin. For each request it prints, as one row of a
// markdown table: the request, the HTTP status (or kubectl's exit),
// the wall time, the CPU time of the apiserver that served it (utime +
// stime from /proc) and its VmRSS and VmHWM (/proc/<pid>/status) before
// and after, and the outcome checked (the ConfigMap still there, every pod
// still there, the /metrics series count unchanged, ...). A row whose
// check fails is marked NO and the exit status is 1.
//
// It starts no cluster: the operator brings one up first, on the process
// provider (the apiserver's PID and the CA's key are read from the state
// directory), and tears it down after. With --down it runs `kstep down
// --purge` itself as its last row, the finding that the purge left
// nodes/node-0 behind.
//
//	bin/kstep up -d --hollow-nodes 3 --real-nodes 1 --state-dir /tmp/h56
//	go run ./hack/hostile56 --kubeconfig /tmp/h56/kubeconfig --state-dir /tmp/h56 --down
//
// Without a real node (--real-nodes needs root) the exec through
// nodes/proxy reaches a hollow kubelet, whose runtime answers that its
// containers run no processes: the query string arrived all the same.
// kubectl (on PATH, or --kubectl) runs the kubectl cases.
//
// It is a reproduction tool, not part of kstep: nothing in make or CI runs
// it, and no kstep package may import it. It writes only into its own
// namespace, the ClusterRole and ClusterRoleBinding it names
// h56-nodes-proxy-get, and a temporary directory for alice's kubeconfig;
// it deletes them when it ends.
package main
