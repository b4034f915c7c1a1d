package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/results"
)

// ClusterSpec is the cluster a run of prof starts on the named provider
// (process or docker, already resolved), with its state in state and
// every actor's step events in traces: the profile's Topology with the
// flags a bench run adds — only the endpoints writer that stamps ⑧ when
// the profile says stamping (writersFlag), the lease timing
// (ApplyLeaseTiming),
// --endpoints-stamp, the hollow kubelets' Events explicit — and no real node the machine cannot
// run (dropped and said so on logf). It is the one place those flags are
// decided: Run starts it, and `kstep up --profile` starts the same cluster
// for a run through --provider external to be set beside (the cross view).
// recorded is its Topology as run.json records it: without
// --endpoints-stamp, which run.json records as endpoints_stamp.
func ClusterSpec(prof *Profile, providerName, binary, state, traces string, logf func(string, ...any)) (spec provider.Spec, recorded provider.Topology) {
	spec = provider.Spec{Topology: prof.Cluster, StateDir: state, TraceDir: traces, Binary: binary,
		ReadyTimeout: 2 * time.Minute}
	if spec.RealNodes > 0 {
		if err := provider.CanRunRealNodes(providerName, spec); err != nil {
			logf("no real nodes in this run: %v", err)
			spec.RealNodes = 0
		}
	}
	// Only the endpoints writer that stamps ⑧ runs when the profile says
	// stamping (run.json's topology shows the flag); both by default.
	if f := prof.writersFlag(); f != "" {
		spec.ControllerManagerArgs = append([]string{f}, spec.ControllerManagerArgs...)
	}
	// Upstream's lease timing unless the profile says kstep's: the nodes'
	// heartbeat on both of its sides, and leader election.
	ApplyLeaseTiming(prof.LeaseTiming, &spec.Topology)
	// Whether the hollow kubelets write Events, explicit in run.json.
	if spec.HollowNodes > 0 {
		on := spec.HollowEventsOn()
		spec.HollowEvents = &on
	}
	recorded = spec.Topology
	// The profile's stamp choice goes to every controller-manager, before
	// the profile's own extra flags (Validate refuses a second one there).
	spec.ControllerManagerArgs = append([]string{"--endpoints-stamp=" + prof.EndpointsStamp}, spec.ControllerManagerArgs...)
	return spec, recorded
}

// newCluster makes the provider opts.Provider names (already resolved) for
// the profile's cluster (ClusterSpec): state in state, every actor's step
// events in traces; run.Cluster records what runs.
func newCluster(ctx context.Context, prof *Profile, opts Options, state, traces, label string, run *results.Run, logf func(string, ...any)) (provider.Spec, provider.Provider, error) {
	if opts.Provider == provider.External {
		// kstep runs none of it: no topology, no actor flags. The harness
		// records what it finds (Run) and the provider removes what the
		// run labelled at Down.
		spec := provider.Spec{StateDir: state, Kubeconfig: opts.Kubeconfig, Context: opts.Context, RunID: label, Log: opts.Log}
		run.Runtime = ""
		run.Cluster = results.Cluster{Objects: prof.Job.Count, Replicas: int(prof.Job.Object.Replicas), QPS: prof.Job.QPS, External: &results.External{Context: opts.Context}}
		p, err := provider.New(ctx, opts.Provider, spec)
		return spec, p, err
	}
	spec, recorded := ClusterSpec(prof, opts.Provider, opts.Binary, state, traces, logf)
	spec.Log = opts.Log
	kind := fmt.Sprintf("hollow (%s)", spec.LatencyProfile)
	if spec.RealNodes > 0 {
		runtime := "containerd"
		if opts.Provider == provider.Docker {
			runtime = "containerd in Docker"
		}
		kind = fmt.Sprintf("%d real (%s) + %d hollow (%s)", spec.RealNodes, runtime, spec.HollowNodes, spec.LatencyProfile)
		run.Runtime = "containerd+hollow"
	}
	run.Cluster = results.Cluster{Topology: recorded, NodeKind: kind, Security: spec.Security(),
		Objects: prof.Job.Count, Replicas: int(prof.Job.Object.Replicas), QPS: prof.Job.QPS, NotAsUp: NotAsUp(prof, spec)}
	for _, d := range run.Cluster.NotAsUp {
		logf("not as kstep up starts it: %s", d)
	}
	p, err := provider.New(ctx, opts.Provider, spec)
	if err != nil {
		return spec, nil, err
	}
	return spec, p, nil
}

// ApplyLeaseTiming gives t's actors the lease timing named (LeaseUpstream
// or LeaseKstep). Upstream's adds, before each actor kind's own flags,
// leader election at 15 s / 10 s / 2 s on the controller-managers and
// schedulers and upstream's node heartbeat on the controller-managers and
// the kubelets (upstreamHeartbeat), each flag unless t's args set it;
// kstep's adds none: the actors' own defaults, what the chaos engine runs.
// It is what ClusterSpec gives a profile's cluster and what `kstep up`
// gives its own (UpLeaseTiming unless --lease-timing says otherwise).
func ApplyLeaseTiming(timing string, t *provider.Topology) {
	if timing == LeaseKstep {
		return
	}
	upstreamHeartbeat(t)
	t.ControllerManagerArgs = append(leaseFlags(t.ControllerManagerArgs), t.ControllerManagerArgs...)
	t.SchedulerArgs = append(leaseFlags(t.SchedulerArgs), t.SchedulerArgs...)
}

// upstreamHeartbeat gives t's controller-managers and kubelets (hollow,
// and real through --kubelet-arg) upstream's node heartbeat, each flag
// unless t's args set that flag themselves.
func upstreamHeartbeat(t *provider.Topology) {
	t.ControllerManagerArgs = append(upstreamFlag(t.ControllerManagerArgs, upstreamNodeMonitorWait), t.ControllerManagerArgs...)
	var hollow, real []string
	for _, f := range upstreamKubeletHeartbeat {
		if t.HollowNodes > 0 {
			hollow = append(hollow, upstreamFlag(t.HollowArgs, f)...)
		}
		if t.RealNodes > 0 && upstreamFlag(nodeKubeletArgs(t.NodeArgs), f) != nil {
			real = append(real, "--kubelet-arg="+f)
		}
	}
	if len(hollow) > 0 {
		t.HollowArgs = append(hollow, t.HollowArgs...)
	}
	if len(real) > 0 {
		t.NodeArgs = append(real, t.NodeArgs...)
	}
}

// nodeKubeletArgs are the kubelet flags among a real node's args (each
// --kubelet-arg's value).
func nodeKubeletArgs(args []string) []string {
	var out []string
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "--kubelet-arg="):
			out = append(out, strings.TrimPrefix(a, "--kubelet-arg="))
		case a == "--kubelet-arg" && i+1 < len(args):
			out = append(out, args[i+1])
		}
	}
	return out
}
