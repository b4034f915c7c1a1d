package provider

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/apiclient"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

func TestTopologyValidate(t *testing.T) {
	for _, tc := range []struct {
		name       string
		members    int
		apiservers int
		want       string // "" means valid
	}{
		{"default", 3, 2, ""},
		{"one member for tests", 1, 0, ""},
		{"five members", 5, 2, ""},
		{"seven members", 7, 1, ""},
		{"no members", 0, 2, "out of range"},
		{"two members", 2, 2, "is even"},
		{"four members", 4, 2, "use 3 or 5"},
		{"nine members", 9, 2, "out of range"},
		{"negative apiservers", 3, -1, "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultTopology()
			c.EtcdMembers, c.APIServers = tc.members, tc.apiservers
			if tc.apiservers == 0 {
				c.ControllerManagers, c.Schedulers = 0, 0 // they need an apiserver
			}
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Validate() = %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}

// ActorCPUs is a CPU list, bounded before it is expanded.
func TestActorCPUs(t *testing.T) {
	for list, want := range map[string][]int{"1": {1}, "0-3": {0, 1, 2, 3}, "2,0": {0, 2}, "0-1,3": {0, 1, 3},
		"": nil, "x": nil, "3-1": nil, "-1": nil, "0-99999999": nil, "4096": nil, "1,,2": nil} {
		if got := ParseCPUs(list); !slices.Equal(got, want) {
			t.Errorf("ParseCPUs(%q) = %v, want %v", list, got, want)
		}
		c := DefaultTopology()
		c.ActorCPUs = list
		if err := c.Validate(); (err == nil) != (want != nil || list == "") {
			t.Errorf("Validate with actorCPUs %q: %v", list, err)
		}
	}
}

// A profile's or scenario's etcd block overrides only what it sets, and
// timing etcd would refuse is refused before anything starts.
func TestEtcdTimingDefaultsAndValidate(t *testing.T) {
	ms := func(n int) metav1.Duration { return metav1.Duration{Duration: time.Duration(n) * time.Millisecond} }
	for _, tc := range []struct {
		name       string
		timing     EtcdTuning
		hb, el     time.Duration
		wantErrSub string
	}{
		{"unset gets kstep's", EtcdTuning{}, DefaultEtcdHeartbeat, DefaultEtcdElection, ""},
		{"etcd's own", EtcdTuning{HeartbeatInterval: ms(100), ElectionTimeout: ms(1000)}, 100 * time.Millisecond, time.Second, ""},
		{"election only", EtcdTuning{ElectionTimeout: ms(2000)}, DefaultEtcdHeartbeat, 2 * time.Second, ""},
		{"below five heartbeats", EtcdTuning{HeartbeatInterval: ms(200)}, 0, 0, "etcd: electionTimeout 500ms is less than 5 × heartbeatInterval"},
		{"fractional", EtcdTuning{HeartbeatInterval: metav1.Duration{Duration: 1500 * time.Microsecond}}, 0, 0, "whole milliseconds"},
		{"negative", EtcdTuning{ElectionTimeout: ms(-1)}, 0, 0, "must be positive"},
		{"too long", EtcdTuning{ElectionTimeout: ms(60000)}, 0, 0, "limit of 50s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := Topology{Etcd: tc.timing}
			top.Defaults()
			err := top.Validate()
			if tc.wantErrSub != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrSub) {
					t.Fatalf("Validate = %v, want an error saying %q", err, tc.wantErrSub)
				}
				return
			}
			if err != nil || top.Etcd.HeartbeatInterval.Duration != tc.hb || top.Etcd.ElectionTimeout.Duration != tc.el {
				t.Fatalf("Validate = %v, timing %v, want %v/%v", err, top.Etcd, tc.hb, tc.el)
			}
		})
	}
}

// The old key "nodes" (hollow in profiles, real in kstep up) is refused
// with both new names; unknown keys are refused; the new keys read.
func TestTopologyKeys(t *testing.T) {
	var top Topology
	err := yaml.Unmarshal([]byte("nodes: 50\n"), &top)
	if !errors.Is(err, ErrRenamedKey) || !strings.Contains(err.Error(), "hollowNodes") || !strings.Contains(err.Error(), "realNodes") {
		t.Fatalf("nodes: %v, want ErrRenamedKey naming hollowNodes and realNodes", err)
	}
	if err := yaml.Unmarshal([]byte("hollowNode: 5\n"), &top); err == nil || !strings.Contains(err.Error(), "hollowNode") {
		t.Fatalf("a misspelt key: %v", err)
	}
	if err := yaml.Unmarshal([]byte("{realNodes: 2, hollowNodes: 50, etcd: {heartbeatInterval: 100ms}}"), &top); err != nil {
		t.Fatal(err)
	}
	if top.RealNodes != 2 || top.HollowNodes != 50 || top.Nodes() != 52 || top.Etcd.HeartbeatInterval.Duration != 100*time.Millisecond {
		t.Fatalf("decoded %+v", top)
	}
}

func TestEtcdTuningArgs(t *testing.T) {
	if got := (EtcdTuning{}).Args(); len(got) != 0 {
		t.Errorf("zero tuning renders %q, want no flags", got)
	}
	got := EtcdTuning{
		HeartbeatInterval:       metav1.Duration{Duration: 50 * time.Millisecond},
		ElectionTimeout:         metav1.Duration{Duration: 500 * time.Millisecond},
		SnapshotCount:           5000,
		QuotaBackendBytes:       1 << 30,
		AutoCompactionMode:      "revision",
		AutoCompactionRetention: "1000",
		MaxRequestBytes:         1 << 20,
		LogLevel:                "error",
	}.Args()
	want := []string{
		"--heartbeat-interval=50",
		"--election-timeout=500",
		"--snapshot-count=5000",
		"--quota-backend-bytes=1073741824",
		"--auto-compaction-mode=revision",
		"--auto-compaction-retention=1000",
		"--max-request-bytes=1048576",
		"--log-level=error",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("args() = %q, want %q", got, want)
	}
}

func TestKubeconfigContexts(t *testing.T) {
	servers := []Actor{
		{Name: "apiserver-0", Endpoint: "http://127.0.0.1:1000"},
		{Name: "apiserver-1", Endpoint: "http://127.0.0.1:1001"},
		{Name: "apiserver-2", Endpoint: "http://127.0.0.1:1002"},
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kubeconfigFor(servers, credentials{}), path); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatalf("load written kubeconfig: %v", err)
	}
	if err := clientcmd.Validate(*cfg); err != nil {
		t.Fatalf("written kubeconfig is invalid: %v", err)
	}
	if cfg.CurrentContext != "kstep" {
		t.Errorf("current context %q, want kstep", cfg.CurrentContext)
	}
	want := map[string]string{
		"kstep":             "http://127.0.0.1:1000",
		"kstep-apiserver-1": "http://127.0.0.1:1001",
		"kstep-apiserver-2": "http://127.0.0.1:1002",
	}
	if len(cfg.Contexts) != len(want) {
		t.Errorf("contexts %v, want %v", cfg.Contexts, want)
	}
	for name, server := range want {
		ctx, ok := cfg.Contexts[name]
		if !ok {
			t.Errorf("no context %q", name)
			continue
		}
		if got := cfg.Clusters[ctx.Cluster].Server; got != server {
			t.Errorf("context %q: server %q, want %q", name, got, server)
		}
	}
	// Anything but the owner reading credentials-to-be is a leak.
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
		t.Errorf("kubeconfig mode %v, want owner-only", st.Mode().Perm())
	}
}

func TestLogTail(t *testing.T) {
	dir := t.TempDir()
	if got := LogTail(filepath.Join(dir, "missing.log")); got != "" {
		t.Errorf("tail of a missing log = %q, want empty", got)
	}
	empty := filepath.Join(dir, "empty.log")
	os.WriteFile(empty, nil, 0o644)
	if got := LogTail(empty); !strings.Contains(got, "is empty") {
		t.Errorf("tail of an empty log = %q", got)
	}
	var b strings.Builder
	for i := range 100 {
		b.WriteString(strings.Repeat("x", 10))
		b.WriteString(" line ")
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString("\n")
	}
	b.WriteString("the last line\n")
	long := filepath.Join(dir, "long.log")
	os.WriteFile(long, []byte(b.String()), 0o644)
	got := LogTail(long)
	if !strings.HasSuffix(got, "\tthe last line") {
		t.Errorf("tail does not end with the last line: %q", got)
	}
	if n := strings.Count(got, "\n\t"); n != 20 {
		t.Errorf("tail has %d lines, want 20", n)
	}
}

func TestHollowNodeNames(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"hollow-nodes", "--count=3", "--kubeconfig=x"}, "hollow-0 hollow-1 hollow-2"},
		{[]string{"hollow-nodes", "--count=2", "--name-prefix=h-", "--first-index", "5"}, "h-5 h-6"},
		{[]string{"hollow-nodes"}, ""},
	} {
		if got := strings.Join(HollowNodeNames(c.args), " "); got != c.want {
			t.Errorf("HollowNodeNames(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

// TestActorKubeconfigsCarryIdentities: each actor's kubeconfig embeds a
// certificate for its own identity, signed by the cluster's CA.
func TestActorKubeconfigsCarryIdentities(t *testing.T) {
	dir := t.TempDir()
	actors := []Component{
		{Name: "scheduler-0", Role: RoleScheduler, User: "system:kube-scheduler"},
		{Name: "node-1", Role: RoleNode, User: "system:node:node-1", Groups: []string{"system:nodes"}},
		{Name: "hollow-nodes", Role: RoleHollowNodes, HollowNodes: []string{"hollow-0", "hollow-1"}},
	}
	if err := WritePKI(dir, actors, nil, nil); err != nil {
		t.Fatal(err)
	}
	is, err := loadIssuer(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(is.ca.Cert)
	server := Actor{Name: "apiserver-0", Endpoint: "https://127.0.0.1:1"}
	for a, want := range map[int]string{0: "system:kube-scheduler/[]", 1: "system:node:node-1/[system:nodes]"} {
		creds, err := is.componentCredentials(actors[a])
		if err != nil {
			t.Fatal(err)
		}
		kc := actorKubeconfig(actors[a].Name, []Actor{server}, creds)
		block, _ := pem.Decode(kc.AuthInfos[actors[a].Name].ClientCertificateData)
		if block == nil {
			t.Fatalf("%s: no client certificate", actors[a].Name)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%s/%v", cert.Subject.CommonName, cert.Subject.Organization); got != want {
			t.Errorf("%s: certificate for %s, want %s", actors[a].Name, got, want)
		}
		if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("%s: %v", actors[a].Name, err)
		}
		if string(kc.Clusters["apiserver-0"].CertificateAuthorityData) != string(is.ca.CertPEM()) {
			t.Errorf("%s: kubeconfig does not trust the cluster CA", actors[a].Name)
		}
	}
	tokens, err := os.ReadFile(PKIPaths(dir).HollowTokens())
	if err != nil {
		t.Fatal(err)
	}
	for _, node := range []string{"system:node:hollow-0", "system:node:hollow-1"} {
		if !strings.Contains(string(tokens), ","+node+",") {
			t.Errorf("hollow-nodes tokens have no line for %s:\n%s", node, tokens)
		}
	}
}

// TestActorKubeconfigsNameEveryAPIServer: an actor's kubeconfig prefers its
// apiserver and names every other one after it, in plan order wrapping
// around, which is the order its client fails over in.
func TestActorKubeconfigsNameEveryAPIServer(t *testing.T) {
	dir := t.TempDir()
	cs := []Component{
		{Name: "apiserver-0", Role: RoleAPIServer}, {Name: "apiserver-1", Role: RoleAPIServer}, {Name: "apiserver-2", Role: RoleAPIServer},
		{Name: "scheduler-0", Role: RoleScheduler, APIServer: "apiserver-1", Kubeconfig: filepath.Join(dir, "kc", "scheduler-0")},
	}
	if err := WritePKI(dir, cs, nil, nil); err != nil {
		t.Fatal(err)
	}
	port := map[string]string{"apiserver-0": "1000", "apiserver-1": "1001", "apiserver-2": "1002"}
	if err := WriteKubeconfigs(dir, cs, true, func(n string) string { return "https://127.0.0.1:" + port[n] }); err != nil {
		t.Fatal(err)
	}
	s, err := apiclient.Load(cs[3].Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(s.Hosts(), ","), "127.0.0.1:1001,127.0.0.1:1002,127.0.0.1:1000"; got != want {
		t.Fatalf("failover order %s, want %s", got, want)
	}
	raw, err := clientcmd.LoadFromFile(cs[3].Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if raw.CurrentContext != "scheduler-0" || raw.Contexts["scheduler-0"].Cluster != "apiserver-1" || raw.Contexts["scheduler-0@apiserver-0"] == nil {
		t.Fatalf("contexts %v, current %s", raw.Contexts, raw.CurrentContext)
	}
}

// hollowEvents reaches the hollow-nodes actor as an explicit --events
// flag (nil: true); an --events among hollowArgs, read after, wins, and
// HollowEventsOn says what the actor will do. A topology from before the
// field meant the actor's old default, no Events, unless its args said.
func TestHollowEvents(t *testing.T) {
	no, yes := false, true
	for _, tc := range []struct {
		field *bool
		args  []string
		flag  string
		on    bool
	}{
		{nil, nil, "--events=true", true},
		{&no, nil, "--events=false", false},
		{&yes, []string{"--events=false"}, "--events=true", false},
		{&no, []string{"--events"}, "--events=false", true},
		{nil, []string{"--events=0", "--events=true"}, "--events=true", true},
	} {
		top := Topology{EtcdMembers: 1, APIServers: 1, HollowNodes: 2, HollowEvents: tc.field, HollowArgs: tc.args}
		h := component(t, Plan(top, fakeAddressing()), "hollow-nodes")
		if !hasArg(h, tc.flag) || top.HollowEventsOn() != tc.on {
			t.Errorf("hollowEvents %v args %q: actor args %q, on %v, want %s and %v", tc.field, tc.args, h.Args, top.HollowEventsOn(), tc.flag, tc.on)
		}
	}
	var top Topology
	if err := top.UnmarshalJSON([]byte(`{"hollowNodes":2,"hollowEvents":false}`)); err != nil || top.HollowEvents == nil || *top.HollowEvents || top.HollowEventsOn() {
		t.Errorf("hollowEvents false read as %v (%v)", top.HollowEvents, err)
	}
	old := Topology{HollowNodes: 2}
	if !old.HollowEventsOn() || old.HollowEventsBeforeField() {
		t.Errorf("no hollowEvents: on %v now, %v before the field", old.HollowEventsOn(), old.HollowEventsBeforeField())
	}
	if old.HollowArgs = []string{"--events"}; !old.HollowEventsBeforeField() {
		t.Errorf("--events before the field: off")
	}
}

// Every actor gets the cluster's GOMAXPROCS right after its command's name,
// so a per-kind extra flag (appended last) still overrides it; the default
// shares the host's CPUs among the actors that work under load.
func TestActorProcs(t *testing.T) {
	for _, tc := range []struct {
		cpus, want int
		top        Topology
	}{
		{2, 1, DefaultTopology()},  // 3 etcd + 2 apiservers + 1 + 1 + nodes = 8 busy
		{16, 2, DefaultTopology()}, // 16 / 8
		{64, 8, DefaultTopology()},
		{8, 2, Topology{EtcdMembers: 1, APIServers: 1, ControllerManagers: 2, Schedulers: 0}}, // 1+1+1+0+1
		{1, 1, Topology{EtcdMembers: 7, APIServers: 3}},
	} {
		if got := DefaultActorProcs(tc.top, tc.cpus); got != tc.want {
			t.Errorf("DefaultActorProcs(%s, %d CPUs) = %d, want %d", tc.top, tc.cpus, got, tc.want)
		}
	}
	top := Topology{EtcdMembers: 1, APIServers: 1, ControllerManagers: 1, Schedulers: 1, RealNodes: 1, HollowNodes: 2,
		ActorProcs: 3, HollowArgs: []string{"--gomaxprocs=2"}}
	top.Defaults()
	if top.ActorProcs != 3 {
		t.Fatalf("Defaults changed a set actorProcs to %d", top.ActorProcs)
	}
	for _, c := range Plan(top, fakeAddressing()) {
		if len(c.Args) < 2 || c.Args[1] != "--gomaxprocs=3" {
			t.Errorf("%s: args %q, want --gomaxprocs=3 after the command", c.Name, c.Args)
		}
	}
	if h := component(t, Plan(top, fakeAddressing()), "hollow-nodes"); h.Args[len(h.Args)-1] != "--gomaxprocs=2" {
		t.Errorf("hollow-nodes: the extra flag is not last: %q", h.Args)
	}
	top.ActorProcs = 0
	for _, c := range Plan(top, fakeAddressing()) {
		if slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--gomaxprocs") && a != "--gomaxprocs=2" }) {
			t.Errorf("%s: actorProcs 0 still passes %q", c.Name, c.Args)
		}
	}
	top.ActorProcs = -1
	if err := top.Validate(); err == nil || !strings.Contains(err.Error(), "actorProcs") {
		t.Errorf("Validate() with actorProcs -1 = %v, want an error naming it", err)
	}
	d := DefaultTopology()
	d.Defaults()
	if d.ActorProcs != DefaultActorProcs(d, runtime.NumCPU()) {
		t.Errorf("Defaults set actorProcs %d, want DefaultActorProcs's %d", d.ActorProcs, DefaultActorProcs(d, runtime.NumCPU()))
	}
}
