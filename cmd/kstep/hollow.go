package main

import (
	"context"
	"net"
	"time"

	"github.com/kstep-dev/kstep/cluster/kubelet/hollowctl"

	"encoding/csv"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"

	"github.com/kstep-dev/kstep/cluster/kubelet"
	kubeletserver "github.com/kstep-dev/kstep/cluster/kubelet/server"
	"github.com/kstep-dev/kstep/cluster/kubelet/simruntime"
	"github.com/kstep-dev/kstep/cluster/opsserver"
	"github.com/kstep-dev/kstep/cluster/pki"
	"github.com/kstep-dev/kstep/cluster/trace"
)

func newHollowNodesCmd() *cobra.Command {
	var kubeconfig, traceFile, metricsAddr, prefix, tokenFile string
	var opsTLS opsserver.TLS
	var count, first int
	var nf nodeFlags
	cmd := &cobra.Command{
		Use:   "hollow-nodes",
		Short: "Run N hollow nodes (kubelets on a simulated runtime) in one process",
		Long: `Run N hollow nodes in one process: each the unchanged kubelet with its own
Node, Lease, pod informer and watch (so the apiserver's load is what N real
nodes would put on it), driving its own in-process simulated CRI runtime.
Each has its own connection to the apiserver, as real nodes do: on one
shared HTTP/2 connection every node's watch events, requests and responses
queue behind one another in the connection's single frame writer.

Node i is named <prefix><i>; its pods get IPs from the i-th /24 of
240.0.0.0/4 (node 1: 240.0.1.0/24), a reserved range nothing routes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			if count <= 0 {
				return errors.New("--count must be positive")
			}
			rc, err := restConfig(ctx, kubeconfig)
			if err != nil {
				return err
			}
			tokens, err := readNodeTokens(tokenFile)
			if err != nil {
				return err
			}
			// clientFor is node's client: a transport (and so a
			// connection) of its own, and with a token file the node's own
			// bearer token on each request. Under saturation a transport
			// shared by 200 nodes held pods/status patches 1.3 s (p50)
			// inside the apiserver, its handlers waiting on that one
			// connection's frame writer; the same node's Lease renewals
			// and Events were 0.2 s.
			clientFor := func(node string) (kubernetes.Interface, error) {
				hc, err := rest.HTTPClientFor(perNodeTransport(rc))
				if err != nil {
					return nil, err
				}
				if tokens == nil {
					return kubernetes.NewForConfigAndClient(rc, hc)
				}
				tok, ok := tokens[node]
				if !ok {
					return nil, fmt.Errorf("--node-token-file %s has no token for node %s", tokenFile, node)
				}
				return kubernetes.NewForConfigAndClient(rc, &http.Client{Transport: transport.NewBearerAuthRoundTripper(tok, hc.Transport), Timeout: hc.Timeout})
			}
			prof, err := simruntime.LoadProfile(nf.latencyProfile)
			if err != nil {
				return err
			}
			t, err := trace.Open(traceFile, "hollow-nodes")
			if err != nil {
				return err
			}
			defer t.Close()
			events := &eventRecorders{on: nf.events}
			defer events.stop()
			log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("actor", "hollow-nodes")

			// One kubelet server for every node, routing by TLS server name;
			// a stopped kubelet's node answers 404 until it runs again.
			served := kubeletserver.NewNodes()
			srv, ln, serveIP, servePort, err := nf.kubeletServer(served.Lookup, log)
			if err != nil {
				return err
			}
			set := &hollowSet{byNode: map[string]*hollowKubelet{}, served: served}
			for i := range count {
				name := fmt.Sprintf("%s%d", prefix, first+i)
				client, err := clientFor(name)
				if err != nil {
					return err
				}
				cfg := kubelet.Config{NodeName: name, Client: client, Tracer: t, Log: log, Recorder: events.recorder(client, name)}
				if err := nf.config(&cfg, true); err != nil {
					return err
				}
				if srv != nil {
					cfg.NodeIP, cfg.ServerPort = serveIP, servePort
				}
				sim, err := simruntime.New(name, simruntime.NodeCIDR(first+i), prof, nil)
				if err != nil {
					return err
				}
				hk := &hollowKubelet{node: name, cfg: cfg, sim: sim}
				set.order = append(set.order, hk)
				set.byNode[name] = hk
			}
			// The ops port's reviews go out as the first node (its
			// kubelet's identity may create SubjectAccessReviews), on a
			// connection of their own.
			reviews, err := clientFor(set.order[0].node)
			if err != nil {
				return err
			}
			if err := serveOps(ctx, metricsAddr, opsTLS, reviews.AuthorizationV1(), func() error {
				if n := set.registered(); n < count {
					return fmt.Errorf("%d of %d nodes registered", n, count)
				}
				return nil
			}, opsserver.Handler{Path: hollowctl.Path, Handler: hollowctl.Handler(set)}); err != nil {
				return err
			}
			if srv != nil {
				defer ln.Close()
				go func() {
					if err := srv.Serve(ctx, ln); err != nil {
						log.Error("kubelet server", "err", err)
					}
				}()
			}
			return set.run(ctx)
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the apiserver to use (required)")
	f.IntVar(&count, "count", 0, "how many hollow nodes (required)")
	f.IntVar(&first, "first-index", 0, "number of the first node (to run several hollow-nodes processes side by side)")
	f.StringVar(&prefix, "name-prefix", "hollow-", "node names are <prefix><index>")
	f.StringVar(&traceFile, "trace-file", "", "append step events (JSON lines) to this file")
	f.StringVar(&tokenFile, "node-token-file", "", `bearer tokens of the nodes, as the apiserver's --token-auth-file (token,system:node:<name>,uid,"system:nodes"); each node sends its own`)
	f.StringVar(&metricsAddr, "metrics-listen", "", "host:port for /healthz (200 once every node is registered), /metrics, /debug/pprof and the hollow kubelets' control ("+hollowctl.Path+")")
	opsTLSFlags(f, &opsTLS)
	nf.add(f)
	return cmd
}

// readNodeTokens reads a token file (the apiserver's CSV format) into node
// name → token, for the lines whose user is system:node:<name>. No file is
// a nil map: every node uses the kubeconfig's credentials.
func readNodeTokens(path string) (map[string]string, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--node-token-file: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("--node-token-file %s: %w", path, err)
	}
	out := map[string]string{}
	for _, rec := range recs {
		if len(rec) < 2 {
			continue
		}
		if node, ok := strings.CutPrefix(rec[1], pki.NodeUserPrefix); ok {
			out[node] = rec[0]
		}
	}
	return out, nil
}

// hollowSet runs the actor's kubelets, each with a lifetime of its own: the
// chaos engine stops and starts one node's kubelet (hollowctl) while the
// others run on.
type hollowSet struct {
	ctx    context.Context
	mu     sync.Mutex
	order  []*hollowKubelet
	byNode map[string]*hollowKubelet
	// failed gets a kubelet's error when it ends by itself.
	failed chan error
	// served are the running kubelets the kubelet server routes to.
	served *kubeletserver.Nodes
}

// hollowKubelet is one node: its runtime outlives its kubelets, as a
// node's containers outlive a kubelet process.
type hollowKubelet struct {
	node   string
	cfg    kubelet.Config
	sim    *simruntime.Runtime
	k      *kubelet.Kubelet
	cancel context.CancelFunc
	done   chan struct{}
	starts int
}

// run starts every kubelet and returns when ctx ends (nil) or a kubelet
// fails by itself (its error).
func (s *hollowSet) run(ctx context.Context) error {
	s.mu.Lock()
	s.ctx, s.failed = ctx, make(chan error, len(s.order))
	for _, hk := range s.order {
		if err := s.startLocked(hk); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	s.mu.Unlock()
	var err error
	select {
	case <-ctx.Done():
	case err = <-s.failed:
	}
	s.mu.Lock()
	running := make([]*hollowKubelet, 0, len(s.order))
	for _, hk := range s.order {
		if hk.cancel != nil {
			hk.cancel()
			running = append(running, hk)
		}
	}
	s.mu.Unlock()
	for _, hk := range running {
		<-hk.done
	}
	return err
}

func (s *hollowSet) startLocked(hk *hollowKubelet) error {
	if hk.cancel != nil {
		return nil
	}
	k, err := kubelet.NewHollow(hk.cfg, hk.sim)
	if err != nil {
		return err
	}
	kctx, cancel := context.WithCancel(s.ctx)
	hk.k, hk.cancel, hk.done = k, cancel, make(chan struct{})
	hk.starts++
	s.served.Set(k)
	go func() {
		defer close(hk.done)
		err := k.Run(kctx)
		if kctx.Err() == nil {
			// Ended by itself, not stopped: the actor fails, as before.
			s.failed <- fmt.Errorf("hollow node %s: %w", hk.node, err)
		}
	}()
	return nil
}

func (s *hollowSet) registered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, hk := range s.order {
		if hk.k != nil && hk.k.Registered() {
			n++
		}
	}
	return n
}

// Kubelets, Stop and Start are the hollowctl.Controller.
func (s *hollowSet) Kubelets() []hollowctl.Kubelet {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]hollowctl.Kubelet, 0, len(s.order))
	for _, hk := range s.order {
		out = append(out, hollowctl.Kubelet{Node: hk.node, Running: hk.cancel != nil, Starts: hk.starts})
	}
	return out
}

func (s *hollowSet) Stop(ctx context.Context, node string) error {
	s.mu.Lock()
	hk, ok := s.byNode[node]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("%s: %w", node, hollowctl.ErrUnknownNode)
	}
	cancel, done := hk.cancel, hk.done
	hk.cancel = nil
	s.served.Remove(node, hk.k)
	s.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop %s: %w", node, ctx.Err())
	}
}

func (s *hollowSet) Start(_ context.Context, node string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	hk, ok := s.byNode[node]
	if !ok {
		return fmt.Errorf("%s: %w", node, hollowctl.ErrUnknownNode)
	}
	if s.ctx == nil || s.ctx.Err() != nil {
		return errors.New("the hollow-nodes actor is not running")
	}
	if hk.cancel == nil && hk.done != nil {
		// A stop in flight: the old kubelet must be gone before a new one
		// registers.
		<-hk.done
	}
	return s.startLocked(hk)
}

// perNodeTransport is rc for a client whose transport is its own:
// client-go caches transports by their config and shares one between equal
// configs, but never between two that each carry a dialer (every
// TransportConfig wraps it in a DialHolder of its own). A config with no
// dialer (one apiserver, no failover) gets a plain one.
func perNodeTransport(rc *rest.Config) *rest.Config {
	c := rest.CopyConfig(rc)
	if c.Dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		c.Dial = d.DialContext
	}
	return c
}
