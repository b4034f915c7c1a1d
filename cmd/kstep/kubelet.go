package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/kstep-dev/kstep/cluster/eventsink"
	"github.com/kstep-dev/kstep/cluster/kubelet"
	"github.com/kstep-dev/kstep/cluster/kubelet/cri"
	kubeletserver "github.com/kstep-dev/kstep/cluster/kubelet/server"
	"github.com/kstep-dev/kstep/cluster/kubelet/simruntime"
	"github.com/kstep-dev/kstep/cluster/opsserver"
	"github.com/kstep-dev/kstep/cluster/trace"
)

// nodeFlags are the flags a kubelet and hollow-nodes share.
type nodeFlags struct {
	cpu, memory    string
	maxPods        int64
	labels         map[string]string
	taints         []string
	leaseRenew     time.Duration
	leaseDuration  int32
	statusFreq     time.Duration
	relist         time.Duration
	backoffInitial time.Duration
	backoffMax     time.Duration
	latencyProfile string
	events         bool
	// failpointRestart: testing only (Config.FailpointRestartContainersAfter).
	failpointRestart time.Duration
	// The kubelet server (cluster/kubelet/server).
	serveListen, tlsCert, tlsKey, clientCA string
}

func (n *nodeFlags) add(f *pflag.FlagSet) {
	f.StringVar(&n.cpu, "cpu", "", "cpu capacity to report (default: the host's; 4 for hollow nodes)")
	f.StringVar(&n.memory, "memory", "", "memory capacity to report, e.g. 8Gi (default: the host's; 8Gi for hollow nodes)")
	f.Int64Var(&n.maxPods, "max-pods", 110, "pods capacity to report")
	f.StringToStringVar(&n.labels, "node-labels", nil, "labels to register the node with (k=v,...)")
	f.StringSliceVar(&n.taints, "register-with-taints", nil, "taints to register the node with (key=value:Effect,...)")
	f.DurationVar(&n.leaseRenew, "node-lease-renew-interval", 2*time.Second, "how often the node's Lease is renewed (the controller-manager's grace period is 8s)")
	f.Int32Var(&n.leaseDuration, "node-lease-duration-seconds", 40, "the Lease's leaseDurationSeconds")
	f.DurationVar(&n.statusFreq, "node-status-update-frequency", 10*time.Second, "how often node status is written when nothing changed")
	f.DurationVar(&n.relist, "relist-period", time.Second, "how often the runtime is relisted for container state changes")
	f.DurationVar(&n.backoffInitial, "crashloop-backoff-initial", 10*time.Second, "first delay of crash-loop and image-pull backoff (doubles per restart)")
	f.DurationVar(&n.backoffMax, "crashloop-backoff-max", 5*time.Minute, "longest crash-loop and image-pull backoff")
	f.StringVar(&n.latencyProfile, "latency-profile", "zero", "hollow runtime behaviour: zero, realistic, flaky, or a YAML file (see cluster/kubelet/simruntime)")
	f.BoolVar(&n.events, "events", true, "write core/v1 Events as upstream's kubelet (Pulling, Pulled, Created, Started, Killing, Unhealthy, BackOff, Failed); false measures the control plane without them")
	f.DurationVar(&n.failpointRestart, "failpoint-restart-containers-after", 0, "testing only: this long after the first container runs, stop every running container once (the kubelet restarts them: the chaos gate's running-pods-unaffected must catch it)")
	_ = f.MarkHidden("failpoint-restart-containers-after")
	f.StringVar(&n.serveListen, "kubelet-listen", "", "host:port of the kubelet server (HTTPS: logs, exec, attach, port-forward, stats; upstream's port is 10250; port 0 picks one). The nodes' InternalIP is its host (the host's first IPv4 when the host is 0.0.0.0) unless --node-ip says otherwise, and its port is published in status.daemonEndpoints. Empty: no server")
	f.StringVar(&n.tlsCert, "tls-cert-file", "", "the kubelet server's certificate, valid for the node names (the apiserver verifies the name)")
	f.StringVar(&n.tlsKey, "tls-private-key-file", "", "the kubelet server's private key")
	f.StringVar(&n.clientCA, "client-ca-file", "", "CA of the client certificates the kubelet server accepts (callers are authorized by SubjectAccessReview)")
}

// kubeletServer is the kubelet server the flags ask for, listening: nil
// without --kubelet-listen. ip is the address nodes register as their
// InternalIP (where the server is reached), port the one they publish.
func (n *nodeFlags) kubeletServer(nodes func(string) (*kubelet.Kubelet, bool), log *slog.Logger) (srv *kubeletserver.Server, ln net.Listener, ip string, port int32, err error) {
	if n.serveListen == "" {
		if n.tlsCert != "" || n.clientCA != "" {
			return nil, nil, "", 0, errors.New("--tls-cert-file and --client-ca-file need --kubelet-listen")
		}
		return nil, nil, "", 0, nil
	}
	host, _, err := net.SplitHostPort(n.serveListen)
	if err != nil {
		return nil, nil, "", 0, fmt.Errorf("--kubelet-listen %q: %w", n.serveListen, err)
	}
	srv, err = kubeletserver.New(kubeletserver.Config{CertFile: n.tlsCert, KeyFile: n.tlsKey, ClientCAFile: n.clientCA, Nodes: nodes, Log: log})
	if err != nil {
		return nil, nil, "", 0, err
	}
	if ln, err = net.Listen("tcp", n.serveListen); err != nil {
		return nil, nil, "", 0, fmt.Errorf("--kubelet-listen: %w", err)
	}
	ip = host
	if a, err := netip.ParseAddr(host); host == "" || (err == nil && a.IsUnspecified()) {
		ip = kubelet.HostIP()
	}
	return srv, ln, ip, int32(ln.Addr().(*net.TCPAddr).Port), nil
}

// config fills the node part of a kubelet config.
func (n *nodeFlags) config(cfg *kubelet.Config, hollow bool) error {
	capacity := corev1.ResourceList{}
	if !hollow {
		capacity = kubelet.HostCapacity()
	} else {
		capacity[corev1.ResourceCPU] = resource.MustParse("4")
		capacity[corev1.ResourceMemory] = resource.MustParse("8Gi")
	}
	for name, v := range map[corev1.ResourceName]string{corev1.ResourceCPU: n.cpu, corev1.ResourceMemory: n.memory} {
		if v == "" {
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return fmt.Errorf("--%s %q: %w", strings.ToLower(string(name)), v, err)
		}
		capacity[name] = q
	}
	capacity[corev1.ResourcePods] = *resource.NewQuantity(n.maxPods, resource.DecimalSI)
	taints, err := kubelet.ParseTaints(n.taints)
	if err != nil {
		return err
	}
	cfg.Capacity, cfg.Labels, cfg.Taints = capacity, n.labels, taints
	cfg.LeaseRenewInterval, cfg.LeaseDuration, cfg.StatusUpdateFrequency = n.leaseRenew, n.leaseDuration, n.statusFreq
	cfg.RelistPeriod, cfg.BackoffInitial, cfg.BackoffMax = n.relist, n.backoffInitial, n.backoffMax
	cfg.Version = "v1.37.2-kstep-" + version
	cfg.FailpointRestartContainersAfter = n.failpointRestart
	return nil
}

// eventRecorders hands out each node's event recorder, as upstream's
// kubelet has it: a broadcaster of its own, writing with the node's own
// client (its credentials, its goroutine), so one busy node's events do not
// queue behind another's; its Events are written off the pod's path, in
// batches (cluster/events). Off, every recorder is nil: no Events. stop
// shuts every broadcaster down.
type eventRecorders struct {
	on        bool
	recorders []*eventsink.Recorders
}

func (e *eventRecorders) recorder(cs kubernetes.Interface, node string) record.EventRecorder {
	if !e.on {
		return nil
	}
	r := eventsink.Start(context.Background(), cs, eventsink.DefaultOptions(), nil)
	e.recorders = append(e.recorders, r)
	return r.Recorder(corev1.EventSource{Component: "kubelet", Host: node})
}

// stop stops every node's recorders at once: each writes what waits for
// up to a second, and hundreds of hollow nodes one after another would
// outlast the stop grace.
func (e *eventRecorders) stop() {
	var wg sync.WaitGroup
	for _, r := range e.recorders {
		wg.Go(r.Stop)
	}
	wg.Wait()
}

func newKubeletCmd() *cobra.Command {
	var kubeconfig, traceFile, metricsAddr, endpoint, podCIDR string
	var hollow bool
	var opsTLS opsserver.TLS
	var nf nodeFlags
	cfg := kubelet.Config{}
	host, _ := os.Hostname()
	cmd := &cobra.Command{
		Use:   "kubelet",
		Short: "Run one node's kubelet until SIGINT or SIGTERM",
		Long: `Run a kubelet (steps ⑥–⑧): register the node, renew its Lease, watch the
pods bound to it, run them through a CRI runtime (containerd over
--container-runtime-endpoint, or an in-process simulated runtime with
--hollow), probe them and report their status.

Pods and containers keep running when the kubelet stops; a restarted
kubelet adopts them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			if hollow == (endpoint != "") {
				return errors.New("exactly one of --container-runtime-endpoint and --hollow is required")
			}
			rc, err := restConfig(ctx, kubeconfig)
			if err != nil {
				return err
			}
			cs, err := kubernetes.NewForConfig(rc)
			if err != nil {
				return err
			}
			if err := nf.config(&cfg, hollow); err != nil {
				return err
			}
			cfg.Client = cs
			cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("actor", "kubelet")
			t, err := trace.Open(traceFile, "kubelet-"+cfg.NodeName)
			if err != nil {
				return err
			}
			defer t.Close()
			cfg.Tracer = t
			events := &eventRecorders{on: nf.events}
			defer events.stop()
			cfg.Recorder = events.recorder(cs, cfg.NodeName)

			var k *kubelet.Kubelet
			srv, ln, serveIP, servePort, err := nf.kubeletServer(func(string) (*kubelet.Kubelet, bool) { return k, k != nil }, cfg.Log)
			if err != nil {
				return err
			}
			if srv != nil {
				defer ln.Close()
				cfg.ServerPort = servePort
				if cfg.NodeIP == "" {
					cfg.NodeIP = serveIP
				}
			}
			if hollow {
				prof, err := simruntime.LoadProfile(nf.latencyProfile)
				if err != nil {
					return err
				}
				cidr := simruntime.NodeCIDRFor(cfg.NodeName)
				if podCIDR != "" {
					if cidr, err = netip.ParsePrefix(podCIDR); err != nil {
						return fmt.Errorf("--pod-cidr: %w", err)
					}
				}
				sim, err := simruntime.New(cfg.NodeName, cidr, prof, nil)
				if err != nil {
					return err
				}
				k, err = kubelet.NewHollow(cfg, sim)
				if err != nil {
					return err
				}
			} else {
				if cfg.NodeIP == "" {
					cfg.NodeIP = kubelet.HostIP()
				}
				if podCIDR != "" {
					if cfg.PodCIDR, err = netip.ParsePrefix(podCIDR); err != nil {
						return fmt.Errorf("--pod-cidr: %w", err)
					}
				}
				rt, err := cri.Dial(endpoint)
				if err != nil {
					return err
				}
				defer rt.Close()
				cfg.Runtime = rt
				if k, err = kubelet.New(cfg); err != nil {
					return err
				}
			}
			if err := serveOps(ctx, metricsAddr, opsTLS, cs.AuthorizationV1(), func() error {
				if !k.Registered() {
					return errors.New("node not registered yet")
				}
				return nil
			}); err != nil {
				return err
			}
			if srv != nil {
				go func() {
					if err := srv.Serve(ctx, ln); err != nil {
						cfg.Log.Error("kubelet server", "err", err)
					}
				}()
			}
			if err := k.Run(ctx); err != nil && ctx.Err() == nil {
				return fmt.Errorf("kubelet %s: %w", cfg.NodeName, err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the apiserver to use (required)")
	f.StringVar(&cfg.NodeName, "node-name", host, "the node's name")
	f.StringVar(&endpoint, "container-runtime-endpoint", "", "CRI socket of the runtime, unix:///run/containerd/containerd.sock")
	f.BoolVar(&hollow, "hollow", false, "run pods in an in-process simulated runtime instead (a hollow node)")
	f.StringVar(&podCIDR, "pod-cidr", "", "the node's pod range (hollow: where fake pod IPs come from; default a /24 of 240.0.0.0/4 picked from the node name)")
	f.StringVar(&cfg.NodeIP, "node-ip", "", "the node's InternalIP and the pods' hostIP (default: the host's first IPv4; hollow: its range's first address)")
	f.StringVar(&traceFile, "trace-file", "", "append step events (JSON lines) to this file")
	f.StringVar(&metricsAddr, "metrics-listen", "", "host:port for /healthz (200 once the node is registered), /metrics and /debug/pprof (empty: none)")
	opsTLSFlags(f, &opsTLS)
	f.StringVar(&cfg.PodLogsDir, "pod-logs-dir", "/var/log/pods", "where the runtime writes container logs")
	f.StringVar(&cfg.RootDir, "root-dir", "/var/lib/kstep/kubelet", "the kubelet's state directory (emptyDir volumes)")
	f.StringVar(&cfg.CgroupParent, "cgroup-parent", "", "cgroupfs parent of pod cgroups, e.g. /kubepods (empty: the runtime decides)")
	f.StringSliceVar(&cfg.ClusterDNS, "cluster-dns", nil, "nameservers for dnsPolicy ClusterFirst (empty: the node's resolv.conf)")
	f.StringVar(&cfg.ClusterDomain, "cluster-domain", "cluster.local", "the cluster's DNS domain")
	f.StringVar(&cfg.RuntimeHandler, "runtime-handler", "", "RunPodSandbox runtime handler (empty: the runtime's default)")
	nf.add(f)
	return cmd
}
