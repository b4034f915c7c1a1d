package bench

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kstep-dev/kstep/cluster/controller"
	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/loadgen"
)

// ProfileKind identifies a profile document.
const ProfileKind = "BenchProfile"

// Profile is a cluster shape and a load job.
type Profile struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	// Cluster is the Topology the provider starts. Real nodes run where the
	// machine can run them (root on Linux and the node binaries for the
	// process provider, the node binaries for docker); otherwise the run
	// says why and goes on without them.
	Cluster provider.Topology `json:"cluster"`
	Job     loadgen.Job       `json:"job"`
	// Repeat is how many times `kstep bench` runs the job, each time on a
	// fresh cluster (a set of runs, what `kstep compare` judges); 0 is 1.
	// --repeat overrides it.
	Repeat int `json:"repeat,omitempty"`
	// EndpointsStamp says which controller stamps step ⑧'s
	// endpoints.updated: "endpoints" (the Endpoints controller's Endpoints
	// write, the default) or "endpointslices" (the EndpointSlice
	// controller's slice write). Every controller-manager gets it as
	// --endpoints-stamp; run.json records it.
	EndpointsStamp string `json:"endpointsStamp,omitempty"`
	// EndpointsWriters says which of step ⑧'s two writers run: "both"
	// (the default: the Endpoints and the EndpointSlice controllers, as
	// `kstep up` and upstream's controller-manager run them) or
	// "stamping" (only the controller that stamps endpoints.updated; the
	// other writer of the same step is off, its writes measured by
	// nothing, and the run's cluster is not the one `kstep up` starts:
	// NotAsUp lists it). A profile whose controllerManagerArgs set
	// --controllers decides itself.
	EndpointsWriters string `json:"endpointsWriters,omitempty"`
	// LeaseTiming is the timing of every Lease in the cluster: "upstream"
	// (the default, and `kstep up`'s) or "kstep" (what the chaos engine
	// runs, and `kstep up --lease-timing kstep`).
	// Upstream's: the controller-managers' and schedulers' leader election
	// at 15 s / 10 s / 2 s, so that a saturated machine's slow renewal
	// does not move a lease mid-run and disrupt it, and the nodes'
	// heartbeat as upstream's kubelet and node lifecycle keep it: each
	// node's Lease renewed every 10 s (a quarter of its 40 s), its status
	// written every 5 min when nothing changed, a node unhealthy after
	// 50 s without a renewal; a bench measures latency and throughput, not
	// failover, and a renewal every 2 s is a write per node every 2 s.
	// kstep's: 2 s / 1.5 s / 250 ms, a node's Lease every 2 s and its
	// status every 10 s, 8 s of grace, so that the chaos engine sees a
	// death within seconds. A profile whose actor args set one of these
	// flags decides that one itself.
	LeaseTiming string `json:"leaseTiming,omitempty"`
	// OutsideView: the load generator's watches also stamp what is seen
	// from outside the cluster (client.pod.added, .bound, .running,
	// client.endpoints.listed), and the report gets the outside rows, on
	// any provider: beside the actors' own rows on process and docker, the
	// rows an external run has. --provider external always takes it.
	OutsideView bool `json:"outsideView,omitempty"`
	// WarmUp is the start of the load left out of the rows (Input.WarmUp):
	// objects: the first N objects sent, duration: those sent within it
	// of the first send. Their pods still count for validity, throughput
	// and costs. Unset: none left out (measured on the 2-core machine
	// while it was shared and saturated, leaving out the quick profile's
	// first 20 or 40 objects did not lower the runs' CV; see docs/guides/compare.md).
	// --warm-up-objects and --warm-up-duration override it; run.json
	// records it (warm_up) and compare refuses sets that differ in it.
	WarmUp *WarmUp `json:"warmUp,omitempty"`
}

// WarmUpOf is the profile's warm-up, zero when it sets none.
func (p *Profile) WarmUpOf() WarmUp {
	if p.WarmUp == nil {
		return WarmUp{}
	}
	return *p.WarmUp
}

// LeaseTiming values.
const (
	LeaseUpstream = "upstream"
	LeaseKstep    = "kstep"
)

// leaseFlags are upstream's leader-election flags for actors whose args
// are args, or none when args set their own.
func leaseFlags(args []string) []string {
	for _, a := range args {
		if strings.HasPrefix(a, "--leader-elect") {
			return nil
		}
	}
	return []string{"--leader-elect-lease-duration=15s", "--leader-elect-renew-deadline=10s", "--leader-elect-retry-period=2s"}
}

// Upstream's node heartbeat: kubelet's Lease renewed at a quarter of its
// 40 s duration and its node status written every 5 min when nothing
// changed (nodeStatusReportFrequency), kube-controller-manager's
// --node-monitor-grace-period.
var upstreamKubeletHeartbeat = []string{"--node-lease-renew-interval=10s", "--node-status-update-frequency=5m"}

const upstreamNodeMonitorWait = "--node-monitor-grace-period=50s"

// upstreamFlag is flag (--name=value) for actors whose args are args,
// unless args set --name themselves: nil then.
func upstreamFlag(args []string, flag string) []string {
	name, _, _ := strings.Cut(flag, "=")
	for _, a := range args {
		if a == name || strings.HasPrefix(a, name+"=") {
			return nil
		}
	}
	return []string{flag}
}

// EndpointsWriters values.
const (
	WritersStamping = "stamping"
	WritersBoth     = "both"
)

// writersFlag is the --controllers flag that leaves out the endpoints
// writer that does not stamp ⑧, or "" when both run.
func (p *Profile) writersFlag() string {
	if p.EndpointsWriters == WritersBoth {
		return ""
	}
	for _, a := range p.Cluster.ControllerManagerArgs {
		if a == "--controllers" || strings.HasPrefix(a, "--controllers=") {
			return ""
		}
	}
	if p.EndpointsStamp == controller.StampEndpointSlices {
		return "--controllers=*,-endpoints"
	}
	return "--controllers=*,-endpointslice,-endpointslicemirroring"
}

func (p *Profile) defaults() {
	if p.APIVersion == "" {
		p.APIVersion = loadgen.APIVersion
	}
	if p.Kind == "" {
		p.Kind = ProfileKind
	}
	c := &p.Cluster
	c.Defaults()
	if c.HollowNodes == 0 && c.RealNodes == 0 {
		c.HollowNodes = 50
	}
	if c.LatencyProfile == "" {
		c.LatencyProfile = "zero"
	}
	if p.Job.Name == "" {
		p.Job.Name = p.Name
	}
	if p.EndpointsStamp == "" {
		p.EndpointsStamp = controller.StampEndpoints
	}
	if p.EndpointsWriters == "" {
		p.EndpointsWriters = WritersBoth
	}
	if p.LeaseTiming == "" {
		p.LeaseTiming = LeaseUpstream
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
	c := p.Cluster
	if p.Repeat < 0 || p.Repeat > MaxRepeat {
		return fmt.Errorf("profile %q: repeat %d is out of range: 1 to %d runs", p.Name, p.Repeat, MaxRepeat)
	}
	if c.Nodes() < 1 || c.APIServers < 1 || c.ControllerManagers < 1 || c.Schedulers < 1 {
		return fmt.Errorf("profile %q: cluster needs at least one node, apiserver, controller-manager and scheduler: %s", p.Name, c)
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("profile %q: cluster: %w", p.Name, err)
	}
	if err := controller.ValidateEndpointsStamp(p.EndpointsStamp); err != nil {
		return fmt.Errorf("profile %q: endpointsStamp: %w", p.Name, err)
	}
	if p.LeaseTiming != LeaseUpstream && p.LeaseTiming != LeaseKstep {
		return fmt.Errorf("profile %q: leaseTiming %q: want %s or %s", p.Name, p.LeaseTiming, LeaseUpstream, LeaseKstep)
	}
	if p.EndpointsWriters != WritersStamping && p.EndpointsWriters != WritersBoth {
		return fmt.Errorf("profile %q: endpointsWriters %q: want %s or %s", p.Name, p.EndpointsWriters, WritersStamping, WritersBoth)
	}
	for _, a := range c.ControllerManagerArgs {
		if a == "--endpoints-stamp" || strings.HasPrefix(a, "--endpoints-stamp=") {
			return fmt.Errorf("profile %q: cluster.controllerManagerArgs sets --endpoints-stamp: set endpointsStamp instead, so run.json records it", p.Name)
		}
	}
	if p.WarmUp != nil {
		if err := p.WarmUp.Validate(p.Job.Count); err != nil {
			return fmt.Errorf("profile %q: %w", p.Name, err)
		}
	}
	return p.Job.Validate()
}

func builtin(name string, objects int, replicas int32, real, hollow int, qps float64, burst int, ready time.Duration) Profile {
	p := Profile{Name: name, Cluster: provider.Topology{HollowNodes: hollow, RealNodes: real}, Job: loadgen.Job{
		Name: name, Count: objects, QPS: qps, Burst: burst,
		Namespaces: []string{"kstep-load-0", "kstep-load-1"},
		Object:     loadgen.ObjectTemplate{Replicas: replicas, ReadinessProbe: true, Service: true},
		Timeouts:   loadgen.Timeouts{Ready: loadgen.Duration{Duration: ready}},
		Phases:     loadgen.Phases{Delete: false},
	}}
	p.defaults()
	return p
}

// MaxRepeat bounds a set: a hundred fresh clusters is already a day of
// nightly runs.
const MaxRepeat = 100

// Builtin profiles by name.
var Builtin = map[string]Profile{
	// quick and nightly add 2 real nodes when the machine can run them.
	"quick": builtin("quick", 200, 1, 2, 50, 20, 5, 5*time.Minute),
	// nightly offers 60 pods/s, inside what the 2-core reference machine
	// sustains: at 50 ReplicaSets/s (150 pods/s) it saturated at 79 pods/s,
	// latencies grew to seconds, a scheduler's 2 s Lease expired and nodes
	// missed their grace period, so the run compared nothing night to night.
	"nightly": repeated(5, builtin("nightly", 2000, 3, 2, 500, 20, 10, 20*time.Minute)),
	"scale":   builtin("scale", 5000, 1, 0, 1000, 100, 20, 30*time.Minute),
	// light is the light-load floor: 100 ReplicaSets of one replica, one
	// every 100 ms, on 50 hollow nodes; the control plane is idle between
	// them, so its latency is the path's own, nothing queued.
	"light": builtin("light", 100, 1, 0, 50, 10, 1, 2*time.Minute),
	// saturation offers 2,000 ReplicaSets of one replica as fast as the
	// load generator sends them (a 5,000/s bucket, 100 deep, and 100
	// writes in flight: the client is not the limit) to 200 hollow nodes:
	// its pods/s is the cluster's throughput, its CPU per pod the cost of
	// one. With the default 10 in flight, each waiting for its Service's
	// and its ReplicaSet's creates, the load generator capped it at about
	// 31 pods/s with the cluster 1.65 of 2 cores busy.
	"saturation": inFlight(100, builtin("saturation", 2000, 1, 0, 200, 5000, 100, 10*time.Minute)),
}

// inFlight sets how many of a profile's writes may be in flight at once.
func inFlight(n int, p Profile) Profile {
	p.Job.Workers = n
	return p
}

// repeated sets a profile's Repeat: nightly runs five times, the fewest a
// side at which the rank test of `kstep compare` can reach p < 0.05.
func repeated(n int, p Profile) Profile {
	p.Repeat = n
	return p
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
