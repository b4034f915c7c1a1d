package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/results"
)

// newCluster makes the provider opts.Provider names (already resolved) for
// the profile's cluster: state in state, every actor's step events in
// traces. Real nodes the machine cannot run are dropped, and said so on
// logf; run.Cluster records what runs.
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
	spec := provider.Spec{Topology: prof.Cluster, StateDir: state, TraceDir: traces, Binary: opts.Binary,
		ReadyTimeout: 2 * time.Minute, Log: opts.Log}
	if spec.RealNodes > 0 {
		if err := provider.CanRunRealNodes(opts.Provider, spec); err != nil {
			logf("no real nodes in this run: %v", err)
			spec.RealNodes = 0
		}
	}
	kind := fmt.Sprintf("hollow (%s)", spec.LatencyProfile)
	if spec.RealNodes > 0 {
		runtime := "containerd"
		if opts.Provider == provider.Docker {
			runtime = "containerd in Docker"
		}
		kind = fmt.Sprintf("%d real (%s) + %d hollow (%s)", spec.RealNodes, runtime, spec.HollowNodes, spec.LatencyProfile)
		run.Runtime = "containerd+hollow"
	}
	// Only the endpoints writer that stamps ⑧ runs, unless the profile
	// says both (run.json's topology shows the flag).
	if f := prof.writersFlag(); f != "" {
		spec.ControllerManagerArgs = append([]string{f}, spec.ControllerManagerArgs...)
	}
	// Upstream's lease timing unless the profile says kstep's.
	spec.ControllerManagerArgs = append(prof.leaseFlags(spec.ControllerManagerArgs), spec.ControllerManagerArgs...)
	spec.SchedulerArgs = append(prof.leaseFlags(spec.SchedulerArgs), spec.SchedulerArgs...)
	// Whether the hollow kubelets write Events, explicit in run.json.
	if spec.HollowNodes > 0 {
		on := spec.HollowEventsOn()
		spec.HollowEvents = &on
	}
	run.Cluster = results.Cluster{Topology: spec.Topology, NodeKind: kind, Security: spec.Security(),
		Objects: prof.Job.Count, Replicas: int(prof.Job.Object.Replicas), QPS: prof.Job.QPS}
	// The profile's stamp choice goes to every controller-manager, before
	// the profile's own extra flags (Validate refuses a second one there).
	spec.ControllerManagerArgs = append([]string{"--endpoints-stamp=" + prof.EndpointsStamp}, spec.ControllerManagerArgs...)
	p, err := provider.New(ctx, opts.Provider, spec)
	if err != nil {
		return spec, nil, err
	}
	return spec, p, nil
}
