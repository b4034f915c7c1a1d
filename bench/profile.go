package bench

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kstep-dev/kstep/cluster/provider/process"
	"github.com/kstep-dev/kstep/loadgen"
)

// ProfileKind identifies a profile document.
const ProfileKind = "BenchProfile"

// Profile is a cluster shape and a load job.
type Profile struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Name       string       `json:"name"`
	Cluster    ClusterShape `json:"cluster"`
	Job        loadgen.Job  `json:"job"`
}

// ClusterShape is what the provider starts.
type ClusterShape struct {
	EtcdMembers        int `json:"etcdMembers"`
	APIServers         int `json:"apiservers"`
	ControllerManagers int `json:"controllerManagers"`
	Schedulers         int `json:"schedulers"`
	// Nodes hollow nodes (kubelets on the simulated runtime), run as one
	// `kstep hollow-nodes` process.
	Nodes int `json:"nodes"`
	// RealNodes are real nodes (containerd + runc + CNI + kubelet) beside
	// the hollow ones, when this machine can run them (root on Linux and
	// the node binaries); otherwise the run says why and goes on without.
	RealNodes int `json:"realNodes"`
	// LatencyProfile is the hollow runtime's behaviour: zero, realistic,
	// flaky or a file (see cluster/kubelet/simruntime).
	LatencyProfile string `json:"latencyProfile"`
	// Insecure runs the apiservers without the write chain's security: plain
	// HTTP, no authentication, every caller the admin (the process provider
	// otherwise serves TLS with client certificates, RBAC and the node
	// authorizer). Two runs that differ only here show what step ①'s
	// security costs.
	Insecure bool `json:"insecure"`
	// Etcd is the members' Raft timing; unset fields keep the provider's
	// (process.DefaultEtcdHeartbeat, process.DefaultEtcdElection).
	Etcd process.EtcdTiming `json:"etcd"`
}

func (p *Profile) defaults() {
	if p.APIVersion == "" {
		p.APIVersion = loadgen.APIVersion
	}
	if p.Kind == "" {
		p.Kind = ProfileKind
	}
	c := &p.Cluster
	process.DefaultTopology(&c.EtcdMembers, &c.APIServers, &c.ControllerManagers, &c.Schedulers)
	if c.Nodes == 0 && c.RealNodes == 0 {
		c.Nodes = 50
	}
	if c.LatencyProfile == "" {
		c.LatencyProfile = "zero"
	}
	if p.Job.Name == "" {
		p.Job.Name = p.Name
	}
	p.Job.Defaults()
}

// Validate reports what is wrong with p.
func (p *Profile) Validate() error {
	if p.Kind != ProfileKind {
		return fmt.Errorf("profile %q: kind %q, want %s", p.Name, p.Kind, ProfileKind)
	}
	if p.Name == "" {
		return fmt.Errorf("profile: name is empty")
	}
	if p.Cluster.Nodes+p.Cluster.RealNodes < 1 || p.Cluster.Nodes < 0 || p.Cluster.RealNodes < 0 || p.Cluster.APIServers < 1 || p.Cluster.ControllerManagers < 1 || p.Cluster.Schedulers < 1 {
		return fmt.Errorf("profile %q: cluster needs at least one node, apiserver, controller-manager and scheduler: %+v", p.Name, p.Cluster)
	}
	if err := p.Cluster.Etcd.Apply(ptr.To(process.DefaultConfig().Etcd)); err != nil {
		return fmt.Errorf("profile %q: cluster: %w", p.Name, err)
	}
	return p.Job.Validate()
}

func builtin(name string, objects int, replicas int32, real, nodes int, qps float64, burst int, ready time.Duration) Profile {
	p := Profile{Name: name, Cluster: ClusterShape{Nodes: nodes, RealNodes: real}, Job: loadgen.Job{
		Name: name, Count: objects, QPS: qps, Burst: burst,
		Namespaces: []string{"kstep-load-0", "kstep-load-1"},
		Object:     loadgen.ObjectTemplate{Replicas: replicas, ReadinessProbe: true, Service: true},
		Timeouts:   loadgen.Timeouts{Ready: loadgen.Duration{Duration: ready}},
		Phases:     loadgen.Phases{Delete: false},
	}}
	p.defaults()
	return p
}

// Builtin profiles by name.
var Builtin = map[string]Profile{
	// quick and nightly add 2 real nodes when the machine can run them.
	"quick": builtin("quick", 200, 1, 2, 50, 20, 5, 5*time.Minute),
	// nightly offers 60 pods/s, inside what the 2-core reference machine
	// sustains: at 50 ReplicaSets/s (150 pods/s) it saturated at 79 pods/s,
	// latencies grew to seconds, a scheduler's 2 s Lease expired and nodes
	// missed their grace period, so the run compared nothing night to night.
	"nightly": builtin("nightly", 2000, 3, 2, 500, 20, 10, 20*time.Minute),
	"scale":   builtin("scale", 5000, 1, 0, 1000, 100, 20, 30*time.Minute),
}

// LoadProfile returns the built-in profile of that name or reads a file.
func LoadProfile(nameOrFile string) (*Profile, error) {
	if p, ok := Builtin[nameOrFile]; ok {
		return &p, nil
	}
	b, err := os.ReadFile(nameOrFile)
	if err != nil {
		names := make([]string, 0, len(Builtin))
		for n := range Builtin {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("profile %q is neither built in (%s) nor a readable file: %w", nameOrFile, strings.Join(names, ", "), err)
	}
	var p Profile
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		return nil, fmt.Errorf("profile %s: %w", nameOrFile, err)
	}
	p.defaults()
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("profile %s: %w", nameOrFile, err)
	}
	return &p, nil
}
