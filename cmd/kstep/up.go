package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kstep-dev/kstep/bench"
	"github.com/kstep-dev/kstep/cluster/provider"
)

// defaultStateDir is $HOME/.kstep/default, or "" when there is no home.
func defaultStateDir() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".kstep", "default")
}

func stateDirFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "state-dir", defaultStateDir(), "directory holding the cluster's state, data, logs and kubeconfig")
}

func newUpCmd() *cobra.Command {
	cfg := provider.Spec{Topology: provider.DefaultTopology(), ReadyTimeout: time.Minute, StopGrace: 10 * time.Second}
	providerName := provider.Process
	var oldNodes int
	var hollowEvents bool
	var profile string
	leaseTiming := bench.UpLeaseTiming
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a cluster: etcd, apiservers, controller-managers, schedulers, nodes",
		Long: `Start a cluster. With --provider process (the default) every actor is a
child process of this binary on 127.0.0.1; with --provider docker every
actor is a container of its own on a private Docker network, from images
built locally from this binary's directory (make build), reached from the
host on ports published on 127.0.0.1. In the foreground kstep up waits for
SIGINT or SIGTERM, then stops the cluster. With --detach it returns once
the cluster is ready, printing KUBECONFIG=<path> as the last line; "kstep
down" stops it.

--profile NAME|FILE starts the cluster "kstep bench --profile NAME" starts
on the same provider: the profile's cluster block with every flag bench
adds (one endpoints writer if the profile asks for it, upstream's lease timing, --endpoints-stamp,
the hollow kubelets' Events explicit), each actor's step events in
<state-dir>/traces (--trace-dir moves them), and no supervisor unless
--supervise is given (a bench run has none). "kstep bench --provider
external --kubeconfig" against it then measures the same cluster a process
run of the profile measures: what "kstep compare" sets beside it (the
cross view). The flags that shape the cluster are refused beside it; the
extra actor flags (--apiserver-arg, ...), --hollow-events, --actor-procs and --actor-cpus apply on top,
as they do in bench.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("nodes") {
				return fmt.Errorf("up: --nodes is no longer accepted: it meant real nodes here and hollow nodes in bench profiles; use --real-nodes %d (containerd nodes) or --hollow-nodes %d (kubelets over the simulated runtime)", oldNodes, oldNodes)
			}
			if cmd.Flags().Changed("hollow-events") {
				cfg.HollowEvents = &hollowEvents
			}
			if cfg.StateDir == "" {
				return errors.New("no --state-dir given and no home directory to default to")
			}
			if !cmd.Flags().Changed("actor-procs") {
				// The default for the cluster the flags shaped.
				cfg.ActorProcs = provider.DefaultActorProcs(cfg.Topology, runtime.NumCPU())
			}
			if profile != "" {
				if providerName == provider.External {
					return usageError{fmt.Errorf("--provider external: kstep up starts a cluster, and external is one kstep does not run (kstep bench --provider external --kubeconfig uses it)")}
				}
				name, err := provider.Resolve(cmd.Context(), providerName, cmd.ErrOrStderr())
				if err != nil {
					return usageError{err}
				}
				providerName = name
				if cfg, err = profileSpec(cfg, profile, providerName, cmd.Flags().Changed, cmd.ErrOrStderr()); err != nil {
					return usageError{fmt.Errorf("up: %w", err)}
				}
			}
			if profile == "" {
				if leaseTiming != bench.LeaseUpstream && leaseTiming != bench.LeaseKstep {
					return usageError{fmt.Errorf("up: --lease-timing %q: want %s or %s", leaseTiming, bench.LeaseUpstream, bench.LeaseKstep)}
				}
				bench.ApplyLeaseTiming(leaseTiming, &cfg.Topology)
			}
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("up: %w", err)
			}
			if cfg.TraceDir != "" {
				// The actors open their files in it; they do not make it.
				if err := os.MkdirAll(cfg.TraceDir, 0o755); err != nil {
					return fmt.Errorf("up: --trace-dir: %w", err)
				}
			}
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			stderr := cmd.ErrOrStderr()
			cfg.Log = stderr
			if providerName == provider.External {
				return usageError{fmt.Errorf("--provider external: kstep up starts a cluster, and external is one kstep does not run (kstep bench --provider external --kubeconfig uses it)")}
			}
			p, err := provider.New(ctx, providerName, cfg)
			if err != nil {
				return err
			}
			fmt.Fprintf(stderr, "kstep: starting %s %s, state in %s\n", cfg.Topology, providerNote(p.Name()), p.StateDir())
			if err := p.Up(ctx); err != nil {
				return fmt.Errorf("up: %w", err)
			}
			if cfg.Detach && cfg.Supervise {
				fmt.Fprintf(stderr, "kstep: actors that die are restarted (%s)\n", supervisorNote(p.Name()))
			}
			printCluster(cmd.OutOrStdout(), p)
			if cfg.Detach {
				return nil
			}

			fmt.Fprintf(stderr, "kstep: cluster ready; ^C or `kstep down --state-dir %s` stops it\n", p.StateDir())
			supervised := make(chan struct{})
			if cfg.Supervise {
				// In the foreground, this process is the supervisor.
				go func() {
					defer close(supervised)
					_ = provider.Supervise(ctx, p, provider.DefaultRestart, stderr)
				}()
			} else {
				close(supervised)
			}
			<-ctx.Done()
			<-supervised // no restart races the shutdown
			fmt.Fprintln(stderr, "kstep: stopping the cluster")
			// Apiservers, then etcd, each SIGTERM then SIGKILL after the grace.
			dctx, cancel := context.WithTimeout(context.Background(), 2*(cfg.StopGrace+15*time.Second))
			defer cancel()
			if err := p.Down(dctx); err != nil {
				return err
			}
			fmt.Fprintln(stderr, "kstep: cluster stopped")
			return nil
		},
	}
	stateDirFlag(cmd, &cfg.StateDir)
	f := cmd.Flags()
	f.StringVar(&providerName, "provider", providerName, providerFlagUsage)
	f.StringVar(&profile, "profile", "", "start the cluster \"kstep bench --profile\" starts for this profile (built in: quick, nightly, scale, light, saturation; or a BenchProfile file), to run it through --provider external; no supervisor unless --supervise is given")
	f.IntVar(&cfg.EtcdMembers, "etcd-members", cfg.EtcdMembers, "etcd cluster size: 1, 3, 5 or 7")
	f.IntVar(&cfg.APIServers, "apiservers", cfg.APIServers, "number of apiservers (0 runs etcd alone)")
	f.IntVar(&cfg.ControllerManagers, "controller-managers", cfg.ControllerManagers, "number of controller-managers (one leads)")
	f.IntVar(&cfg.Schedulers, "schedulers", cfg.Schedulers, "number of schedulers (one leads)")
	f.IntVar(&cfg.RealNodes, "real-nodes", 0, "number of real nodes (containerd + runc + CNI + kubelet); needs make build, and root on Linux for --provider process")
	f.IntVar(&oldNodes, "nodes", 0, "refused: use --real-nodes or --hollow-nodes")
	_ = f.MarkHidden("nodes")
	f.StringArrayVar(&cfg.NodeArgs, "node-arg", nil, "extra flag for every kstep node (repeatable; commas are kept: --controller-manager-arg=--controllers=*,-endpointslice is one flag)")
	f.IntVar(&cfg.HollowNodes, "hollow-nodes", 0, "number of hollow nodes (kubelets over a simulated runtime, all in one process)")
	f.StringVar(&cfg.LatencyProfile, "latency-profile", "", "the hollow runtime's latency profile: zero, realistic, flaky or a file")
	f.BoolVar(&hollowEvents, "hollow-events", true, "the hollow kubelets write Events (Pulling, Started, Unhealthy, ...) as real kubelets do; false: none")
	f.StringArrayVar(&cfg.HollowArgs, "hollow-arg", nil, "extra flag for the hollow-nodes actor (repeatable; commas are kept: --controller-manager-arg=--controllers=*,-endpointslice is one flag)")
	f.StringVar(&cfg.TraceDir, "trace-dir", "", "directory for each actor's step events (<actor>.jsonl)")
	f.StringArrayVar(&cfg.ControllerManagerArgs, "controller-manager-arg", nil, "extra flag for every controller-manager (repeatable; commas are kept: --controller-manager-arg=--controllers=*,-endpointslice is one flag)")
	f.StringArrayVar(&cfg.SchedulerArgs, "scheduler-arg", nil, "extra flag for every scheduler (repeatable; commas are kept: --controller-manager-arg=--controllers=*,-endpointslice is one flag)")
	f.StringArrayVar(&cfg.APIServerArgs, "apiserver-arg", nil, "extra flag for every apiserver (repeatable; commas are kept: --controller-manager-arg=--controllers=*,-endpointslice is one flag)")
	f.BoolVarP(&cfg.Detach, "detach", "d", false, "return once the cluster is ready and leave it running")
	f.BoolVar(&cfg.Supervise, "supervise", true, "restart actors that die, Restart=always with a backoff doubling from 100 ms to 10 s, for as long as the cluster lives (with -d: a `kstep supervise` process on the process provider, the containers' restart policy on docker); off with --profile unless given")
	f.StringVar(&cfg.Binary, "kstep-binary", "", "kstep binary the actors run (default: this executable)")
	f.DurationVar(&cfg.ReadyTimeout, "ready-timeout", cfg.ReadyTimeout, "how long to wait for each actor to become ready")
	f.DurationVar(&cfg.StopGrace, "stop-grace", cfg.StopGrace, "how long to wait after SIGTERM before SIGKILL when stopping")
	f.StringVar(&cfg.Etcd.LogLevel, "etcd-log-level", "", "etcd members' log level (default: kstep etcd's)")
	f.DurationVar(&cfg.Etcd.HeartbeatInterval.Duration, "etcd-heartbeat-interval", cfg.Etcd.HeartbeatInterval.Duration, "etcd members' Raft heartbeat (etcd's own default: 100ms)")
	f.DurationVar(&cfg.Etcd.ElectionTimeout.Duration, "etcd-election-timeout", cfg.Etcd.ElectionTimeout.Duration, "etcd members' Raft election timeout, at least 5 heartbeats (etcd's own default: 1s)")
	f.StringVar(&cfg.ActorCPUs, "actor-cpus", cfg.ActorCPUs, "pin every actor to these CPUs, a list like 1 or 2-3 (process: the actors' CPU affinity; docker: --cpuset-cpus; default: the kernel places them)")
	f.IntVar(&cfg.ActorProcs, "actor-procs", cfg.ActorProcs, "every actor's GOMAXPROCS (default: the host's CPUs shared among the actors that work under load, at least 1; Go's own default is every CPU)")
	f.StringVar(&leaseTiming, "lease-timing", leaseTiming, "the Leases' timing: upstream (leader election 15s/10s/2s, each node's Lease renewed every 10s, its status every 5m when nothing changed, a node unhealthy after 50s without a renewal; holds under load) or kstep (2s/1.5s/250ms, a Lease every 2s, 8s of grace: a death seen within seconds, what the chaos engine runs); an actor flag given with --*-arg wins")
	f.BoolVar(&cfg.Insecure, "insecure", false, "serve the API over plain HTTP with every caller the admin (no PKI): to measure what security costs")
	return cmd
}

// upProfileRefuses are the flags that shape the cluster, which a
// --profile's cluster block decides.
var upProfileRefuses = []string{"etcd-members", "apiservers", "controller-managers", "schedulers", "real-nodes", "hollow-nodes",
	"latency-profile", "insecure", "etcd-heartbeat-interval", "etcd-election-timeout", "etcd-log-level", "lease-timing"}

// profileSpec is cfg made the cluster a bench run of the profile starts on
// the (resolved) provider, from bench.ClusterSpec, the one place bench
// decides its cluster: the same topology and actor flags, and step events
// in <state-dir>/traces unless --trace-dir says where. The extra actor
// flags and --hollow-events of cfg go on top of the profile's, as in
// bench; the flags that shape the cluster (changed reports which were
// given) are refused. No supervisor unless --supervise was given: a bench
// run has none.
func profileSpec(cfg provider.Spec, name, providerName string, changed func(string) bool, log io.Writer) (provider.Spec, error) {
	var given []string
	for _, f := range upProfileRefuses {
		if changed(f) {
			given = append(given, "--"+f)
		}
	}
	if len(given) > 0 {
		return cfg, fmt.Errorf("--profile %s decides the cluster: %s cannot go with it (the profile's cluster block sets them)", name, strings.Join(given, ", "))
	}
	prof, err := bench.LoadProfile(name)
	if err != nil {
		return cfg, err
	}
	c := &prof.Cluster
	c.AppendArgs(cfg.Topology)
	if cfg.HollowEvents != nil {
		c.HollowEvents = cfg.HollowEvents
	}
	if changed("actor-procs") {
		c.ActorProcs = cfg.ActorProcs
	}
	if changed("actor-cpus") {
		c.ActorCPUs = cfg.ActorCPUs
	}
	if err := prof.Validate(); err != nil {
		return cfg, err
	}
	traces := cfg.TraceDir
	if traces == "" {
		traces = filepath.Join(cfg.StateDir, "traces")
	}
	spec, _ := bench.ClusterSpec(prof, providerName, cfg.Binary, cfg.StateDir, traces, func(format string, a ...any) {
		fmt.Fprintf(log, "kstep: "+format+"\n", a...)
	})
	cfg.Topology, cfg.TraceDir = spec.Topology, spec.TraceDir
	if !changed("supervise") {
		cfg.Supervise = false
	}
	fmt.Fprintf(log, "kstep: the cluster of bench profile %s (as kstep bench --provider %s starts it), step events in %s\n", prof.Name, providerName, cfg.TraceDir)
	return cfg, nil
}

// printCluster prints each actor and its endpoint, then the environment a
// client needs. KUBECONFIG, when there is one, is the last line: scripts
// take it with `tail -n1`.
func printCluster(w io.Writer, p provider.Provider) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ACTOR\tROLE\tENDPOINT\tPID\tLOG")
	var etcd []string
	secureEtcd := false
	for _, a := range p.Actors() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", a.Name, a.Role, a.Endpoint, a.PID, a.LogPath)
		if a.Role == provider.RoleEtcd {
			etcd = append(etcd, a.Endpoint)
			secureEtcd = secureEtcd || strings.HasPrefix(a.Endpoint, "https://")
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "ETCDCTL_ENDPOINTS=%s\n", strings.Join(etcd, ","))
	if secureEtcd {
		// etcd takes only its own CA's certificates: kstep's operator one.
		ca, cert, key := provider.PKIPaths(p.StateDir()).EtcdAdmin()
		fmt.Fprintf(w, "ETCDCTL_CACERT=%s\nETCDCTL_CERT=%s\nETCDCTL_KEY=%s\n", ca, cert, key)
	}
	if k := p.Kubeconfig(); k != "" {
		fmt.Fprintf(w, "KUBECONFIG=%s\n", k)
	}
}

// supervisorNote says who restarts a detached cluster's actors.
func supervisorNote(providerName string) string {
	if providerName == provider.Docker {
		return "dockerd: every container's restart policy is \"always\""
	}
	return "kstep supervise, stopped by kstep down"
}
