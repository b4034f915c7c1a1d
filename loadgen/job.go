package loadgen

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"time"

	"sigs.k8s.io/yaml"
)

// APIVersion and Kind identify a LoadJob document.
const (
	APIVersion = "kstep.dev/v1alpha1"
	Kind       = "LoadJob"
)

// Object kinds a job can create.
const (
	KindReplicaSet = "ReplicaSet"
	KindDeployment = "Deployment"
	// KindService is written only alongside an object (ObjectTemplate.Service).
	KindService = "Service"
)

// JobLabel is set on every object and pod template of a job, with the job's
// name: the pod watch selects on it.
const JobLabel = "kstep.dev/job"

// Job is one load job. Load applies the defaults; Validate checks it.
type Job struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	// Object is what each of Count copies is.
	Object ObjectTemplate `json:"object"`
	// Count objects are created, spread round-robin over Namespaces
	// (created if absent).
	Count      int      `json:"count"`
	Namespaces []string `json:"namespaces"`
	// QPS and Burst are the token bucket every write goes through.
	QPS   float64 `json:"qps"`
	Burst int     `json:"burst"`
	// Workers is how many writes may be in flight at once.
	Workers  int      `json:"workers"`
	Phases   Phases   `json:"phases"`
	Timeouts Timeouts `json:"timeouts"`
}

// ObjectTemplate is the object each copy is made from.
type ObjectTemplate struct {
	// Kind is ReplicaSet (default) or Deployment.
	Kind string `json:"kind"`
	// Replicas of each object.
	Replicas int32 `json:"replicas"`
	// Image of the one container; it must resolve on the nodes (hollow nodes
	// accept any image).
	Image string `json:"image"`
	// CPU request of the container ("" for none), e.g. "10m".
	CPU string `json:"cpu"`
	// NamePrefix: object i is <prefix><i>.
	NamePrefix string `json:"namePrefix"`
	// ReadinessProbe gives the container an HTTP readiness probe on
	// :8080/readyz (kstep-app serves it), so Ready means the probe passed.
	ReadinessProbe bool `json:"readinessProbe"`
	// Service gives each object a ClusterIP Service of the same name that
	// selects its pods, created just before the object, so the endpoints
	// controller lists each pod and step ⑧'s endpoints.updated is stamped.
	// The wait-Ready phase then also waits until every pod is listed.
	Service bool `json:"service"`
}

// Phases are run in order: create → wait Ready → (scale → wait Ready) → delete.
type Phases struct {
	// ScaleTo, when positive, scales every object to this many replicas
	// after the first wait.
	ScaleTo int32 `json:"scaleTo"`
	// Delete removes the objects at the end (and waits for their pods).
	Delete bool `json:"delete"`
}

// Timeouts bound each phase.
type Timeouts struct {
	Create Duration `json:"create"`
	Ready  Duration `json:"ready"`
	Delete Duration `json:"delete"`
}

// Duration is a time.Duration written as "90s" in YAML.
type Duration struct{ time.Duration }

func (d Duration) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

func (d *Duration) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' {
		s = s[1 : len(s)-1]
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w", s, err)
	}
	d.Duration = v
	return nil
}

// Defaults fills every zero field. Load calls it; so must code that builds a
// Job by hand.
func (j *Job) Defaults() {
	if j.APIVersion == "" {
		j.APIVersion = APIVersion
	}
	if j.Kind == "" {
		j.Kind = Kind
	}
	if j.Name == "" {
		j.Name = "load"
	}
	if j.Object.Kind == "" {
		j.Object.Kind = KindReplicaSet
	}
	if j.Object.Replicas == 0 {
		j.Object.Replicas = 1
	}
	if j.Object.Image == "" {
		j.Object.Image = "registry.kstep.local/app:v1"
	}
	if j.Object.NamePrefix == "" {
		j.Object.NamePrefix = j.Name + "-"
	}
	if len(j.Namespaces) == 0 {
		j.Namespaces = []string{"default"}
	}
	if j.QPS == 0 {
		j.QPS = 20
	}
	if j.Burst == 0 {
		j.Burst = 1
	}
	if j.Workers == 0 {
		j.Workers = 10
	}
	if j.Timeouts.Create.Duration == 0 {
		j.Timeouts.Create.Duration = 10 * time.Minute
	}
	if j.Timeouts.Ready.Duration == 0 {
		j.Timeouts.Ready.Duration = 10 * time.Minute
	}
	if j.Timeouts.Delete.Duration == 0 {
		j.Timeouts.Delete.Duration = 5 * time.Minute
	}
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Validate says what is wrong with j, every problem at once.
func (j *Job) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if j.APIVersion != APIVersion {
		bad("apiVersion: %q, want %q", j.APIVersion, APIVersion)
	}
	if j.Kind != Kind {
		bad("kind: %q, want %q", j.Kind, Kind)
	}
	if !dnsLabel.MatchString(j.Name) || len(j.Name) > 63 {
		bad("name: %q is not a DNS label (lower-case letters, digits, '-')", j.Name)
	}
	switch j.Object.Kind {
	case KindReplicaSet, KindDeployment:
	default:
		bad("object.kind: %q, want ReplicaSet or Deployment", j.Object.Kind)
	}
	if j.Object.Replicas < 0 {
		bad("object.replicas: %d is negative", j.Object.Replicas)
	}
	if j.Count <= 0 {
		bad("count: %d, want at least 1", j.Count)
	}
	for _, ns := range j.Namespaces {
		if !dnsLabel.MatchString(ns) {
			bad("namespaces: %q is not a DNS label", ns)
		}
	}
	if j.QPS <= 0 {
		bad("qps: %v, want > 0", j.QPS)
	}
	if j.Burst < 1 {
		bad("burst: %d, want ≥ 1", j.Burst)
	}
	if j.Workers < 1 {
		bad("workers: %d, want ≥ 1", j.Workers)
	}
	if j.Phases.ScaleTo < 0 {
		bad("phases.scaleTo: %d is negative", j.Phases.ScaleTo)
	}
	for name, d := range map[string]time.Duration{"create": j.Timeouts.Create.Duration, "ready": j.Timeouts.Ready.Duration, "delete": j.Timeouts.Delete.Duration} {
		if d < 0 {
			bad("timeouts.%s: %v is negative", name, d)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("load job %q: %w", j.Name, errors.Join(errs...))
	}
	return nil
}

// ExpectedPods is how many pods must be Ready after the create phase.
func (j *Job) ExpectedPods() int { return j.Count * int(j.Object.Replicas) }

// Parse reads a LoadJob document, applies the defaults and validates it.
// Unknown fields are errors: a typo must not silently run a different load.
func Parse(data []byte) (*Job, error) {
	var j Job
	if err := yaml.UnmarshalStrict(data, &j); err != nil {
		return nil, fmt.Errorf("load job: %w", err)
	}
	j.Defaults()
	if err := j.Validate(); err != nil {
		return nil, err
	}
	return &j, nil
}

// Load reads a LoadJob file.
func Load(path string) (*Job, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load job: %w", err)
	}
	j, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return j, nil
}
