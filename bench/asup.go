package bench

import (
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/kstep-dev/kstep/cluster/controller"
	"github.com/kstep-dev/kstep/cluster/provider"
)

// UpLeaseTiming is the lease timing `kstep up` gives the clusters it
// starts without --profile unless --lease-timing says otherwise:
// upstream's, which holds under the bench loads (kstep's 2 s node Leases
// and 1.5 s leader renewals expired under them); what a run's LeaseTiming
// is set beside in NotAsUp.
const UpLeaseTiming = LeaseUpstream

// NotAsUp lists every setting in which the cluster of spec (ClusterSpec
// of prof) differs from the cluster `kstep up` starts with its defaults,
// one "name: value (kstep up: value)" each, with why where the profile
// keeps it: run.json's cluster.not_as_up and the report's header, and
// what `kstep compare` refuses to set beside a different list. The shape
// (how many of each actor) is not a setting, nor are the extra actor
// flags, which vary a build: run.json's topology records both. Empty,
// never nil: a run that recorded it has the list, even when it is empty.
func NotAsUp(prof *Profile, spec provider.Spec) []string {
	out := []string{}
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if prof.EndpointsWriters == WritersStamping && prof.writersFlag() != "" {
		off := "the EndpointSlice and EndpointSliceMirroring controllers"
		if prof.EndpointsStamp == controller.StampEndpointSlices {
			off = "the Endpoints controller"
		}
		add("endpointsWriters: %s, %s off (kstep up: %s, both of step ⑧'s writers)", WritersStamping, off, WritersBoth)
	}
	if prof.LeaseTiming != UpLeaseTiming {
		add("leaseTiming: %s (kstep up: %s)", prof.LeaseTiming, UpLeaseTiming)
	}
	if spec.HollowNodes > 0 && !spec.HollowEventsOn() {
		add("hollowEvents: false, the hollow kubelets write no Events (kstep up: true)")
	}
	if lp := spec.LatencyProfile; lp != "" && lp != "zero" {
		add("latencyProfile: %s (kstep up: zero)", lp)
	}
	if spec.Insecure {
		add("insecure: true, plain HTTP and every caller the admin (kstep up: TLS, x509 and tokens, Node + RBAC)")
	}
	up := provider.DefaultTopology()
	if spec.Etcd != up.Etcd {
		a, _ := json.Marshal(spec.Etcd)
		b, _ := json.Marshal(up.Etcd)
		add("etcd: %s (kstep up: %s)", a, b)
	}
	if def := provider.DefaultActorProcs(spec.Topology, runtime.NumCPU()); spec.ActorProcs != 0 && spec.ActorProcs != def {
		add("actorProcs: %d (kstep up: %d on this machine)", spec.ActorProcs, def)
	}
	if spec.LinkProxies {
		add("linkProxies: true, every link through kstep's link proxy (kstep up: none)")
	}
	if !spec.Supervise {
		// Kept: a run is judged on a cluster that stays whole; an actor
		// restarted behind the figures would hide its death.
		add("supervise: false, an actor that dies stays dead and the run says so (kstep up: restarted)")
	}
	return out
}
