package simruntime

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"sigs.k8s.io/yaml"
)

// Config is a hollow runtime's behaviour: how long each CRI call takes, how
// often it fails, and how long a started container takes to answer probes.
// The zero Config is the "zero" profile: every call instant, none failing,
// probes passing as soon as a container starts.
type Config struct {
	// Latency models each CRI method by name ("RunPodSandbox", "PullImage",
	// ...); "*" applies to methods not named. Missing: instant.
	Latency map[string]Model `json:"latency,omitempty"`
	// Failures is the fraction (0..1) of calls to a method that fail with
	// codes.Unavailable; "*" applies to methods not named.
	Failures map[string]float64 `json:"failures,omitempty"`
	// StartDelay models how long after StartContainer a container's
	// HTTP/TCP/exec probes start to pass (the application's start-up). A
	// container's START_DELAY environment variable, the one the workload
	// image honours, overrides it.
	StartDelay Model `json:"startDelay,omitempty"`
	// JobDuration models how long a Job's container (one of a pod labelled
	// batch.kubernetes.io/job-name, as the Job controller labels them)
	// works before it exits 0; unset, DefaultJobDuration. The container's
	// SIM_EXIT_AFTER environment variable overrides it.
	JobDuration Model `json:"jobDuration,omitempty"`
	// Seed makes the draws repeatable; each node mixes in its name.
	Seed uint64 `json:"seed,omitempty"`
}

// Model is a latency distribution.
type Model struct {
	// Dist is "fixed" (Value), "uniform" (Min..Max) or "lognormal" (Median,
	// Sigma: the log's standard deviation). Empty means no latency.
	Dist   string        `json:"dist,omitempty"`
	Value  time.Duration `json:"-"`
	Min    time.Duration `json:"-"`
	Max    time.Duration `json:"-"`
	Median time.Duration `json:"-"`
	Sigma  float64       `json:"sigma,omitempty"`
}

// modelJSON is Model with durations as Go duration strings ("300ms").
type modelJSON struct {
	Dist   string  `json:"dist,omitempty"`
	Value  string  `json:"value,omitempty"`
	Min    string  `json:"min,omitempty"`
	Max    string  `json:"max,omitempty"`
	Median string  `json:"median,omitempty"`
	Sigma  float64 `json:"sigma,omitempty"`
}

// UnmarshalJSON reads durations as strings ("300ms", "1.5s").
func (m *Model) UnmarshalJSON(b []byte) error {
	var j modelJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*m = Model{Dist: j.Dist, Sigma: j.Sigma}
	for _, f := range []struct {
		s string
		d *time.Duration
	}{{j.Value, &m.Value}, {j.Min, &m.Min}, {j.Max, &m.Max}, {j.Median, &m.Median}} {
		if f.s == "" {
			continue
		}
		d, err := time.ParseDuration(f.s)
		if err != nil {
			return fmt.Errorf("latency model: %w", err)
		}
		*f.d = d
	}
	return m.validate()
}

// MarshalJSON writes durations as strings.
func (m Model) MarshalJSON() ([]byte, error) {
	s := func(d time.Duration) string {
		if d == 0 {
			return ""
		}
		return d.String()
	}
	return json.Marshal(modelJSON{Dist: m.Dist, Value: s(m.Value), Min: s(m.Min), Max: s(m.Max), Median: s(m.Median), Sigma: m.Sigma})
}

func (m Model) validate() error {
	switch m.Dist {
	case "", "fixed":
	case "uniform":
		if m.Max < m.Min {
			return fmt.Errorf("latency model: uniform max %v < min %v", m.Max, m.Min)
		}
	case "lognormal":
		if m.Median <= 0 || m.Sigma < 0 {
			return fmt.Errorf("latency model: lognormal needs median > 0 and sigma >= 0")
		}
	default:
		return fmt.Errorf("latency model: unknown dist %q (fixed, uniform, lognormal)", m.Dist)
	}
	return nil
}

// Sample draws one latency.
func (m Model) Sample(r *rand.Rand) time.Duration {
	switch m.Dist {
	case "fixed":
		return m.Value
	case "uniform":
		if m.Max == m.Min {
			return m.Min
		}
		return m.Min + time.Duration(r.Int64N(int64(m.Max-m.Min)))
	case "lognormal":
		return time.Duration(float64(m.Median) * math.Exp(m.Sigma*r.NormFloat64()))
	}
	return 0
}

// Validate checks every model and rate.
func (c *Config) Validate() error {
	for k, m := range c.Latency {
		if err := m.validate(); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	for k, f := range c.Failures {
		if f < 0 || f > 1 {
			return fmt.Errorf("failures %s: %v is not a fraction", k, f)
		}
	}
	return c.StartDelay.validate()
}

func lognormal(median time.Duration, sigma float64) Model {
	return Model{Dist: "lognormal", Median: median, Sigma: sigma}
}

func fixed(d time.Duration) Model { return Model{Dist: "fixed", Value: d} }

// Profiles are the built-in configs --latency-profile names.
//
//   - zero: nothing takes time, nothing fails; measures the kubelet and the
//     control plane alone.
//   - realistic: containerd on this class of machine (shared/DESIGN.md,
//     measured with crictl, warm image): RunPodSandbox p50 335 ms, create
//     76 ms, start 169 ms; a first pull of a small image from the local
//     registry about 0.5 s; reads 1 ms.
//   - flaky: realistic, with 2 % of sandbox, create, start and pull calls
//     failing.
var Profiles = map[string]Config{
	"zero": {},
	"realistic": {Latency: map[string]Model{
		"RunPodSandbox":    lognormal(335*time.Millisecond, 0.25),
		"CreateContainer":  lognormal(76*time.Millisecond, 0.25),
		"StartContainer":   lognormal(169*time.Millisecond, 0.25),
		"PullImage":        lognormal(500*time.Millisecond, 0.5),
		"StopContainer":    lognormal(50*time.Millisecond, 0.25),
		"StopPodSandbox":   lognormal(100*time.Millisecond, 0.25),
		"RemovePodSandbox": lognormal(30*time.Millisecond, 0.25),
		"*":                fixed(time.Millisecond),
	}},
}

func init() {
	flaky := Profiles["realistic"]
	flaky.Failures = map[string]float64{"RunPodSandbox": 0.02, "CreateContainer": 0.02, "StartContainer": 0.02, "PullImage": 0.02}
	Profiles["flaky"] = flaky
}

// LoadProfile returns a built-in profile by name, or reads a YAML or JSON
// Config from the file at nameOrPath.
func LoadProfile(nameOrPath string) (Config, error) {
	if nameOrPath == "" {
		return Config{}, nil
	}
	if c, ok := Profiles[nameOrPath]; ok {
		return c, nil
	}
	b, err := os.ReadFile(nameOrPath)
	if err != nil {
		return Config{}, fmt.Errorf("latency profile %q is neither a built-in (zero, realistic, flaky) nor a readable file: %w", nameOrPath, err)
	}
	var c Config
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return Config{}, fmt.Errorf("latency profile %s: %w", nameOrPath, err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("latency profile %s: %w", nameOrPath, err)
	}
	return c, nil
}
