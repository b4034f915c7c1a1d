package provider

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kstep-dev/kstep/cluster/pki"
)

// Spec is everything a provider needs to bring a cluster up: its Topology
// and where this run keeps its files. It is the one configuration of every
// provider.
type Spec struct {
	Topology
	// StateDir holds the provider's record of the cluster, the PKI, the
	// kubeconfigs and every actor's log.
	StateDir string
	// Binary is the kstep binary the actors run ("" = the running
	// executable); the node programs (containerd, runc, the CNI plugins,
	// kstep-pause, kstep-app) lie beside it (make build's bin/).
	Binary string
	// TraceDir, when set, gets each actor's step events as <actor>.jsonl.
	TraceDir string
	// Detach makes the cluster outlive the process that ran Up.
	Detach bool
	// Supervise restarts actors that die (DefaultRestart: Restart=always
	// with a doubling backoff) for as long as the cluster lives: with
	// Detach, the process provider leaves a `kstep supervise` process
	// behind (Down stops it first) and the docker provider gives every
	// container the "always" restart policy (dockerd's own backoff); in
	// the foreground, `kstep up` supervises in its own process. Off under
	// chaos unless a scenario asks for it: there the engine decides.
	Supervise bool
	// Tokens are extra lines of the apiservers' token file (upstream's CSV:
	// token,user,uid,"group1,group2"): users beyond the built-in identities.
	Tokens []string
	// ReadyTimeout bounds the wait for one actor to become ready (0: one
	// minute); StopGrace is how long Down waits after SIGTERM before
	// SIGKILL (0: ten seconds).
	ReadyTimeout time.Duration
	StopGrace    time.Duration
	// Log gets one line per thing worth knowing (an image built, a
	// fallback); nil discards them.
	Log io.Writer
	// Kubeconfig and Context are the cluster the external provider
	// reaches (it starts nothing); the other providers ignore them.
	Kubeconfig, Context string
	// RunID, when set, is the run whose objects carry RunLabel=RunID: the
	// external provider's Down deletes them (and nothing else).
	RunID string
}

// WithDefaults is s with its zero timeouts set.
func (s Spec) WithDefaults() Spec {
	if s.ReadyTimeout <= 0 {
		s.ReadyTimeout = time.Minute
	}
	if s.StopGrace <= 0 {
		s.StopGrace = 10 * time.Second
	}
	if s.Log == nil {
		s.Log = io.Discard
	}
	return s
}

// The uses of the ports components listen on (Component.Ports).
const (
	PortClient    = "client"     // an etcd member's clients
	PortPeer      = "peer"       // an etcd member's own peer listener
	PortPeerProxy = "peer-proxy" // its peer link, the advertised peer address (Topology.LinkProxies)
	// PortClientProxy is an etcd member's client link, where the
	// apiservers reach it (Topology.LinkProxies).
	PortClientProxy = "client-proxy"
	PortAPI         = "api" // an apiserver
	// PortAPIProxy is an apiserver's link, where the actors reach it
	// (Topology.LinkProxies); the admin kubeconfig and the chaos engine
	// use PortAPI.
	PortAPIProxy = "api-proxy"
	// PortMetrics is controller-managers', schedulers' and hollow nodes'
	// ops port (/healthz, /metrics; cluster/opsserver), and an etcd
	// member's plain metrics URL (/metrics, /health; its client URL takes
	// only certificates).
	PortMetrics  = "metrics"
	PortRegistry = "registry" // the image registry
	PortKubelet  = "kubelet"  // a real node's kubelet: its ops port
	// PortKubeletServer is the kubelet's HTTPS server (logs, exec, attach,
	// port-forward, stats), which the apiservers reach: a real node's, or
	// the one the hollow-nodes actor runs for all its nodes. A node's
	// InternalIP is the address it listens on, and the port is published
	// in the Node's status.daemonEndpoints.
	PortKubeletServer = "kubelet-server"
)

// Component is one actor of a planned cluster, as every provider runs it:
// the same argv, the same identity, the same readiness check. A provider
// decides only where it runs (a child process, a container) and how it is
// reached (Addressing).
type Component struct {
	Name string
	Role Role
	// Args is the argv after the kstep binary.
	Args []string
	// Ports the component listens on, by use, as Addressing.Port gave them.
	Ports map[string]int
	// Serve is the use of the port clients and the readiness probe reach;
	// Scheme ("http", "https") and ReadyPath complete the probe's URL.
	Serve     string
	Scheme    string
	ReadyPath string
	// Metrics, when set, is the use of a plain-http port that serves
	// ReadyPath and /metrics apart from Serve, which then takes client
	// certificates (an etcd member behind TLS): the readiness probe and
	// the bench read it (Actor.MetricsURL).
	Metrics string
	// DataDir is the directory that must survive a restart (an etcd
	// member's data, a real node's containerd root), as the component sees
	// it; "" for none.
	DataDir string
	// Kubeconfig is the component's own kubeconfig, for apiserver clients;
	// APIServer names the apiserver it talks to.
	Kubeconfig string
	APIServer  string
	// User and Groups are its client certificate's identity ("" for none:
	// hollow nodes authenticate each node with a token of its own).
	User   string
	Groups []string
	// HollowNodes are the node names a hollow-nodes actor runs (their
	// tokens are issued for these).
	HollowNodes []string
}

// Addressing is how a provider places components: the ports they bind and
// the hosts others reach them by. It is the only input of Plan besides the
// Topology.
type Addressing struct {
	// Port is the port the component listens on for a use. The process
	// provider hands out free ports of 127.0.0.1; the docker provider the
	// same fixed ports in every container.
	Port func(component, use string) int
	// Host is the name other components reach the component by:
	// 127.0.0.1, or its alias on the cluster's Docker network.
	Host func(component string) string
	// ListenHost is what components bind: 127.0.0.1 or 0.0.0.0.
	ListenHost string
	// DataDir is a component's persistent directory as it sees it.
	DataDir func(component string) string
	// StateDir and TraceDir are the state and trace directories as the
	// components see them (the docker provider bind-mounts both at the
	// same paths); BinDir holds the node programs.
	StateDir, TraceDir, BinDir string
	// NodeArgs are a provider's own extra flags for a real node.
	NodeArgs func(node string) []string
}

// Paths of a cluster's files under its state directory, the same for
// every provider.
func KubeconfigPath(stateDir string) string { return filepath.Join(stateDir, "kubeconfig") }

func componentKubeconfig(stateDir, name string) string {
	return filepath.Join(stateDir, "kubeconfigs", name+".kubeconfig")
}

// LogPath is where an actor's stdout and stderr go.
func LogPath(stateDir, actor string) string { return filepath.Join(stateDir, "logs", actor+".log") }

// Plan lays the Topology's actors out: etcd members, apiservers,
// controller-managers, schedulers, the hollow-nodes actor, then the
// registry and the real nodes, each with its argv. It is pure: the same
// Topology and Addressing give the same components.
func Plan(t Topology, a Addressing) []Component {
	url := func(scheme, host string, port int) string { return scheme + "://" + host + ":" + strconv.Itoa(port) }
	listen := func(port int) string { return a.ListenHost + ":" + strconv.Itoa(port) }
	secure := !t.Insecure
	files := PKIPaths(a.StateDir)
	trace := func(prefix, name string) []string {
		if a.TraceDir == "" {
			return nil
		}
		return []string{prefix + "--trace-file=" + filepath.Join(a.TraceDir, name+".jsonl")}
	}

	var out []Component
	var initial, etcdServers []string
	peerPort := func(name string) int {
		if t.LinkProxies {
			return a.Port(name, PortPeerProxy)
		}
		return a.Port(name, PortPeer)
	}
	// A secure cluster's etcd is https on its client and peer URLs with
	// client certificates required on both (etcd's PKI, pki.go), and
	// serves its metrics and health on a plain metrics URL; an insecure
	// cluster's is plain http, as its apiservers are.
	etcdScheme := "http"
	if secure {
		etcdScheme = "https"
	}
	for i := range t.EtcdMembers {
		name := fmt.Sprintf("etcd-%d", i)
		initial = append(initial, name+"="+url(etcdScheme, a.Host(name), peerPort(name)))
		clientPort := a.Port(name, PortClient)
		if t.LinkProxies {
			clientPort = a.Port(name, PortClientProxy)
		}
		etcdServers = append(etcdServers, url(etcdScheme, a.Host(name), clientPort))
	}
	for i := range t.EtcdMembers {
		name := fmt.Sprintf("etcd-%d", i)
		ports := map[string]int{PortClient: a.Port(name, PortClient), PortPeer: a.Port(name, PortPeer)}
		data := a.DataDir(name)
		args := []string{"etcd",
			"--name=" + name,
			"--data-dir=" + data,
			"--listen-client-urls=" + url(etcdScheme, a.ListenHost, ports[PortClient]),
			"--advertise-client-urls=" + url(etcdScheme, a.Host(name), ports[PortClient]),
			"--listen-peer-urls=" + url(etcdScheme, a.ListenHost, ports[PortPeer]),
			"--initial-advertise-peer-urls=" + url(etcdScheme, a.Host(name), peerPort(name)),
			"--initial-cluster=" + strings.Join(initial, ","),
			"--initial-cluster-state=new",
		}
		metrics := ""
		if secure {
			metrics = PortMetrics
			ports[PortMetrics] = a.Port(name, PortMetrics)
			args = append(args, "--listen-metrics-urls="+url("http", a.ListenHost, ports[PortMetrics]))
			args = append(args, files.etcdArgs(name)...)
		}
		if t.LinkProxies {
			ports[PortPeerProxy] = peerPort(name)
			ports[PortClientProxy] = a.Port(name, PortClientProxy)
			args = append(args, "--peer-proxy-listen="+listen(ports[PortPeerProxy]),
				"--client-proxy-listen="+listen(ports[PortClientProxy]))
		}
		args = append(args, t.Etcd.Args()...)
		out = append(out, Component{Name: name, Role: RoleEtcd, Args: args, Ports: ports,
			Serve: PortClient, Scheme: etcdScheme, ReadyPath: "/health", Metrics: metrics, DataDir: data})
	}

	var apiservers []string
	// A secure cluster's apiservers and ops ports serve TLS.
	scheme, opsScheme := "https", "https"
	if !secure {
		scheme, opsScheme = "http", "http"
	}
	for i := range t.APIServers {
		name := fmt.Sprintf("apiserver-%d", i)
		apiservers = append(apiservers, name)
		port := a.Port(name, PortAPI)
		args := []string{"apiserver", "--name=" + name, "--listen=" + listen(port),
			"--etcd-servers=" + strings.Join(etcdServers, ",")}
		if secure {
			args = append(args, files.apiserverArgs()...)
			args = append(args, files.apiserverEtcdArgs()...)
		}
		if b := t.Etcd.MaxRequestBytes; b != 0 {
			args = append(args, "--max-request-bytes="+strconv.FormatUint(uint64(b), 10))
		}
		if a := t.Etcd.AttemptTimeout(); a != 0 {
			args = append(args, "--etcd-attempt-timeout="+a.String())
		}
		ports := map[string]int{PortAPI: port}
		if t.LinkProxies {
			ports[PortAPIProxy] = a.Port(name, PortAPIProxy)
			args = append(args, "--link-listen="+listen(ports[PortAPIProxy]))
		}
		args = append(args, trace("", name)...)
		args = append(args, t.APIServerArgs...)
		out = append(out, Component{Name: name, Role: RoleAPIServer, Args: args, Ports: ports,
			Serve: PortAPI, Scheme: scheme, ReadyPath: "/readyz"})
	}

	// Every apiserver client prefers apiserver i mod N of its role and
	// fails over to the others (its kubeconfig names them all).
	index := map[Role]int{}
	client := func(c Component) Component {
		if len(apiservers) == 0 {
			return c
		}
		c.APIServer = apiservers[index[c.Role]%len(apiservers)]
		index[c.Role]++
		c.Kubeconfig = componentKubeconfig(a.StateDir, c.Name)
		return c
	}
	for _, role := range []Role{RoleControllerManager, RoleScheduler} {
		count, extra := t.ControllerManagers, t.ControllerManagerArgs
		user := pki.ControllerManagerUser
		if role == RoleScheduler {
			count, extra, user = t.Schedulers, t.SchedulerArgs, pki.SchedulerUser
		}
		for i := range count {
			name := fmt.Sprintf("%s-%d", role, i)
			port := a.Port(name, PortMetrics)
			c := client(Component{Name: name, Role: role, Ports: map[string]int{PortMetrics: port},
				Serve: PortMetrics, Scheme: opsScheme, ReadyPath: "/healthz"})
			c.Args = append([]string{string(role), "--name=" + name, "--kubeconfig=" + c.Kubeconfig,
				"--metrics-listen=" + listen(port)}, trace("", name)...)
			if secure {
				c.User = user
				c.Args = append(c.Args, files.opsArgs(name)...)
			}
			c.Args = append(c.Args, extra...)
			out = append(out, c)
		}
	}
	if t.HollowNodes > 0 {
		name := string(RoleHollowNodes)
		port := a.Port(name, PortMetrics)
		ports := map[string]int{PortMetrics: port}
		c := client(Component{Name: name, Role: RoleHollowNodes, Ports: ports,
			Serve: PortMetrics, Scheme: opsScheme, ReadyPath: "/healthz"})
		c.Args = []string{name, "--count=" + strconv.Itoa(t.HollowNodes), "--kubeconfig=" + c.Kubeconfig,
			"--metrics-listen=" + listen(port)}
		if secure {
			ports[PortKubeletServer] = a.Port(name, PortKubeletServer)
			c.Args = append(c.Args, files.kubeletServerArgs(name, listen(ports[PortKubeletServer]))...)
			c.Args = append(c.Args, files.opsArgs(name)...)
		}
		if t.LatencyProfile != "" {
			c.Args = append(c.Args, "--latency-profile="+t.LatencyProfile)
		}
		// Explicit either way: the actor's default does not decide what
		// run.json records (HollowArgs, appended after, may still say).
		c.Args = append(c.Args, "--events="+strconv.FormatBool(t.HollowEvents == nil || *t.HollowEvents))
		if secure {
			c.Args = append(c.Args, "--node-token-file="+files.HollowTokens())
		}
		c.Args = append(c.Args, trace("", name)...)
		c.Args = append(c.Args, t.HollowArgs...)
		c.HollowNodes = HollowNodeNames(c.Args)
		out = append(out, c)
	}
	if t.RealNodes > 0 {
		reg := string(RoleRegistry)
		regPort := a.Port(reg, PortRegistry)
		out = append(out, Component{Name: reg, Role: RoleRegistry, Ports: map[string]int{PortRegistry: regPort},
			Args:  []string{"registry", "--listen=" + listen(regPort), "--bin-dir=" + a.BinDir},
			Serve: PortRegistry, Scheme: "http", ReadyPath: "/healthz"})
		for i := range t.RealNodes {
			name := fmt.Sprintf("node-%d", i)
			port := a.Port(name, PortKubelet)
			ports := map[string]int{PortKubelet: port}
			c := client(Component{Name: name, Role: RoleNode, Ports: ports,
				Serve: PortKubelet, Scheme: opsScheme, ReadyPath: "/healthz", DataDir: a.DataDir(name)})
			c.Args = []string{"node", "--name=" + name, "--index=" + strconv.Itoa(i+1),
				"--dir=" + c.DataDir, "--bin-dir=" + a.BinDir,
				"--registry=" + a.Host(reg) + ":" + strconv.Itoa(regPort), "--kubeconfig=" + c.Kubeconfig,
				"--kubelet-arg=--metrics-listen=" + listen(port)}
			if secure {
				ports[PortKubeletServer] = a.Port(name, PortKubeletServer)
				for _, arg := range append(files.kubeletServerArgs(name, listen(ports[PortKubeletServer])), files.opsArgs(name)...) {
					c.Args = append(c.Args, "--kubelet-arg="+arg)
				}
			}
			c.Args = append(c.Args, trace("--kubelet-arg=", name)...)
			if a.NodeArgs != nil {
				c.Args = append(c.Args, a.NodeArgs(name)...)
			}
			c.Args = append(c.Args, t.NodeArgs...)
			if secure {
				c.User, c.Groups = pki.NodeUser(name), []string{pki.NodesGroup}
			}
			out = append(out, c)
		}
	}
	if t.ActorProcs > 0 {
		// After the command's name, so an extra flag of the same name in
		// the per-kind args (appended last) wins.
		procs := "--gomaxprocs=" + strconv.Itoa(t.ActorProcs)
		for i := range out {
			out[i].Args = append([]string{out[i].Args[0], procs}, out[i].Args[1:]...)
		}
	}
	return out
}

// ClientPort is the use of the port an apiserver's clients (the other
// actors) reach it on: its link when it has one, else PortAPI.
func (c Component) ClientPort() string {
	if _, ok := c.Ports[PortAPIProxy]; ok {
		return PortAPIProxy
	}
	return PortAPI
}

// HollowNodeNames are the node names a hollow-nodes actor's argv runs:
// <name-prefix><first-index + i> for i < count, with that command's
// defaults.
func HollowNodeNames(args []string) []string {
	prefix, first, count := "hollow-", 0, 0
	for i := 0; i < len(args); i++ {
		name, val, ok := strings.Cut(args[i], "=")
		if !ok && i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			val = args[i+1]
		}
		switch name {
		case "--name-prefix":
			prefix = val
		case "--first-index":
			first, _ = strconv.Atoi(val)
		case "--count":
			count, _ = strconv.Atoi(val)
		}
	}
	names := make([]string, count)
	for i := range names {
		names[i] = prefix + strconv.Itoa(first+i)
	}
	return names
}

// ByRole groups component names by role, each group in plan order.
func ByRole(cs []Component) map[Role][]string {
	out := map[Role][]string{}
	for _, c := range cs {
		out[c.Role] = append(out[c.Role], c.Name)
	}
	return out
}
