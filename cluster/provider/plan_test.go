package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeAddressing numbers ports per component and use, hosts by name.
func fakeAddressing() Addressing {
	next := 1000
	ports := map[string]int{}
	return Addressing{
		Port: func(c, use string) int {
			k := c + "/" + use
			if _, ok := ports[k]; !ok {
				ports[k] = next
				next++
			}
			return ports[k]
		},
		Host:       func(c string) string { return c },
		ListenHost: "0.0.0.0",
		DataDir:    func(c string) string { return "/data/" + c },
		StateDir:   "/state", BinDir: "/bin",
	}
}

func component(t *testing.T, cs []Component, name string) Component {
	t.Helper()
	i := slices.IndexFunc(cs, func(c Component) bool { return c.Name == name })
	if i < 0 {
		t.Fatalf("no component %s", name)
	}
	return cs[i]
}

func hasArg(c Component, want string) bool { return slices.Contains(c.Args, want) }

func TestPlan(t *testing.T) {
	top := Topology{EtcdMembers: 3, APIServers: 2, ControllerManagers: 2, Schedulers: 1, RealNodes: 2, HollowNodes: 3,
		LatencyProfile: "realistic", LinkProxies: true, APIServerArgs: []string{"--x=1"}}
	top.Defaults()
	cs := Plan(top, fakeAddressing())
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	want := "etcd-0 etcd-1 etcd-2 apiserver-0 apiserver-1 controller-manager-0 controller-manager-1 scheduler-0 hollow-nodes registry node-0 node-1"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("components %s, want %s", got, want)
	}
	e := component(t, cs, "etcd-1")
	proxy := e.Ports[PortPeerProxy]
	if proxy == 0 || !hasArg(e, fmt.Sprintf("--peer-proxy-listen=0.0.0.0:%d", proxy)) ||
		!hasArg(e, fmt.Sprintf("--initial-advertise-peer-urls=https://etcd-1:%d", proxy)) ||
		!hasArg(e, "--data-dir=/data/etcd-1") || !hasArg(e, "--heartbeat-interval=50") {
		t.Errorf("etcd-1 args %q", e.Args)
	}
	// A secure cluster's etcd: https with client certificates required on
	// both URLs, its own certificates, metrics and readiness on a plain
	// metrics URL, its links controlled by kstep-etcd-admin only.
	if e.Scheme != "https" || e.Metrics != PortMetrics || e.Ports[PortMetrics] == 0 ||
		!hasArg(e, fmt.Sprintf("--listen-metrics-urls=http://0.0.0.0:%d", e.Ports[PortMetrics])) ||
		!hasArg(e, "--client-cert-auth") || !hasArg(e, "--peer-client-cert-auth") ||
		!hasArg(e, "--cert-file=/state/pki/etcd/etcd-1.crt") || !hasArg(e, "--peer-cert-file=/state/pki/etcd/etcd-1-peer.crt") ||
		!hasArg(e, "--trusted-ca-file=/state/pki/etcd/ca.crt") || !hasArg(e, "--peer-trusted-ca-file=/state/pki/etcd/peer-ca.crt") ||
		!hasArg(e, "--link-control-cn=kstep-etcd-admin") {
		t.Errorf("etcd-1: scheme %s metrics %q args %q", e.Scheme, e.Metrics, e.Args)
	}
	a := component(t, cs, "apiserver-1")
	if a.Scheme != "https" || !hasArg(a, "--authorization-mode=Node,RBAC") || a.Args[len(a.Args)-1] != "--x=1" ||
		!hasArg(a, "--etcd-certfile=/state/pki/etcd/apiserver-etcd-client.crt") || !hasArg(a, "--etcd-cafile=/state/pki/etcd/ca.crt") ||
		!slices.ContainsFunc(a.Args, func(s string) bool { return strings.HasPrefix(s, "--etcd-servers=https://etcd-0:") }) {
		t.Errorf("apiserver-1: scheme %s args %q", a.Scheme, a.Args)
	}
	// No other actor holds an etcd certificate.
	for _, c := range cs {
		if c.Role == RoleEtcd || c.Role == RoleAPIServer {
			continue
		}
		if slices.ContainsFunc(c.Args, func(s string) bool { return strings.Contains(s, "/pki/etcd/") }) {
			t.Errorf("%s is given an etcd certificate: %q", c.Name, c.Args)
		}
	}
	// Clients spread over the apiservers, each role from the first.
	for name, server := range map[string]string{"controller-manager-0": "apiserver-0", "controller-manager-1": "apiserver-1",
		"scheduler-0": "apiserver-0", "node-1": "apiserver-1", "hollow-nodes": "apiserver-0"} {
		if c := component(t, cs, name); c.APIServer != server || c.Kubeconfig != "/state/kubeconfigs/"+name+".kubeconfig" {
			t.Errorf("%s: apiserver %s kubeconfig %s", name, c.APIServer, c.Kubeconfig)
		}
	}
	h := component(t, cs, "hollow-nodes")
	if strings.Join(h.HollowNodes, ",") != "hollow-0,hollow-1,hollow-2" || !hasArg(h, "--latency-profile=realistic") ||
		!hasArg(h, "--node-token-file=/state/pki/hollow-nodes.tokens") || h.User != "" {
		t.Errorf("hollow-nodes: %+v", h)
	}
	n := component(t, cs, "node-1")
	if n.User != "system:node:node-1" || !hasArg(n, "--index=2") || !hasArg(n, fmt.Sprintf("--registry=registry:%d", component(t, cs, "registry").Ports[PortRegistry])) {
		t.Errorf("node-1: %+v", n)
	}
	// Insecure: no TLS, no identities, no tokens.
	top.Insecure = true
	for _, c := range Plan(top, fakeAddressing()) {
		if c.User != "" || slices.ContainsFunc(c.Args, func(a string) bool { return strings.Contains(a, "/pki/") }) || c.Scheme == "https" {
			t.Errorf("insecure %s: %+v", c.Name, c)
		}
	}
	// Pure: the same input gives the same plan.
	if fmt.Sprint(Plan(top, fakeAddressing())) != fmt.Sprint(Plan(top, fakeAddressing())) {
		t.Error("Plan is not deterministic")
	}
}

func TestBootAndShutdownOrder(t *testing.T) {
	top := Topology{EtcdMembers: 3, APIServers: 2, ControllerManagers: 1, Schedulers: 1, RealNodes: 1, HollowNodes: 1}
	cs := Plan(top, fakeAddressing())
	var log []string
	start := func(_ context.Context, names []string) error {
		log = append(log, "start "+strings.Join(names, ","))
		return nil
	}
	if err := Boot(t.Context(), cs, start, func() error { log = append(log, "apiservers ready"); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []string{"start etcd-0,etcd-1,etcd-2", "start apiserver-0,apiserver-1", "apiservers ready", "start registry",
		"start controller-manager-0,scheduler-0,hollow-nodes,node-0"}
	if strings.Join(log, "; ") != strings.Join(want, "; ") {
		t.Errorf("boot:\n%s\nwant\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
	}
	log = nil
	stop := func(_ context.Context, names []string, grace time.Duration) error {
		log = append(log, fmt.Sprintf("stop %s %v", strings.Join(names, ","), grace))
		return nil
	}
	if err := Shutdown(t.Context(), cs, time.Second, stop, func() error { log = append(log, "reap"); return nil }); err != nil {
		t.Fatal(err)
	}
	want = []string{"stop controller-manager-0,scheduler-0,hollow-nodes 1s", "stop node-0 45s", "reap",
		"stop apiserver-0,apiserver-1,registry 1s", "stop etcd-2 1s", "stop etcd-1 1s", "stop etcd-0 1s"}
	if strings.Join(log, "; ") != strings.Join(want, "; ") {
		t.Errorf("shutdown:\n%s\nwant\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
	}
}

func TestRunLabelValue(t *testing.T) {
	for in, want := range map[string]string{
		"20261202-062600-quick": "20261202-062600-quick",
		"run 01/x":              "run-01-x",
		"-a-":                   "a",
		strings.Repeat("x", 70): strings.Repeat("x", 63),
		"20261202t1504-run-01_": "20261202t1504-run-01",
	} {
		if got := RunLabelValue(in); got != want {
			t.Errorf("RunLabelValue(%q) = %q, want %q", in, got, want)
		}
	}
}
