// Package hollowctl is the control of one hollow-nodes actor's kubelets:
// the actor runs many kubelets in one process, and a chaos fault on "a
// kubelet" must take down one of them, not the process. The actor serves
// Path on its ops port (beside /healthz and /metrics; cluster/opsserver,
// which authorizes it: GET is verb get, POST verb post on the path); GET lists its
// kubelets, POST Path/<node>/stop stops that node's kubelet (as a killed
// kubelet process: its node's status and Lease stop, the pods its runtime
// runs keep running) and POST Path/<node>/start starts a new kubelet for
// the node on the same runtime (as a restarted kubelet process: it
// registers again and adopts the pods it finds).
//
// It owns the wire format and a client; the actor (cmd/kstep hollow-nodes)
// implements Controller. It must not know chaos, providers or the kubelet's
// internals.
package hollowctl
