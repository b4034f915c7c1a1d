package config

import (
	"errors"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// APIVersion and Kind are upstream's; a file may omit them.
const (
	APIVersion = "kubescheduler.config.k8s.io/v1"
	Kind       = "KubeSchedulerConfiguration"
)

// Defaults, as upstream.
const (
	DefaultParallelism              = 16
	DefaultPodInitialBackoffSeconds = 1
	DefaultPodMaxBackoffSeconds     = 10
)

// Configuration is the whole file.
type Configuration struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	// Parallelism is how many goroutines filter and score nodes.
	Parallelism int32 `json:"parallelism,omitempty"`
	// PercentageOfNodesToScore: the share of nodes to find feasible before
	// scoring stops looking; 0 is adaptive (50% − nodes/125, at least 5%,
	// at least 100 nodes).
	PercentageOfNodesToScore *int32 `json:"percentageOfNodesToScore,omitempty"`
	// PodInitialBackoffSeconds doubles per failed attempt of a pod up to
	// PodMaxBackoffSeconds.
	PodInitialBackoffSeconds int64 `json:"podInitialBackoffSeconds,omitempty"`
	PodMaxBackoffSeconds     int64 `json:"podMaxBackoffSeconds,omitempty"`
	// Profiles, one per schedulerName served. None means one default
	// profile named default-scheduler.
	Profiles []Profile `json:"profiles,omitempty"`
}

// Profile is one schedulerName and its plugins.
type Profile struct {
	SchedulerName string `json:"schedulerName,omitempty"`
	// PercentageOfNodesToScore overrides the global one for this profile.
	PercentageOfNodesToScore *int32 `json:"percentageOfNodesToScore,omitempty"`
	// Plugins changes the default plugin set; nil keeps it.
	Plugins *Plugins `json:"plugins,omitempty"`
}

// Plugins are per-extension-point changes. MultiPoint applies to every
// extension point a plugin implements.
type Plugins struct {
	MultiPoint PluginSet `json:"multiPoint,omitempty"`
	PreFilter  PluginSet `json:"preFilter,omitempty"`
	Filter     PluginSet `json:"filter,omitempty"`
	PostFilter PluginSet `json:"postFilter,omitempty"`
	PreScore   PluginSet `json:"preScore,omitempty"`
	Score      PluginSet `json:"score,omitempty"`
	Reserve    PluginSet `json:"reserve,omitempty"`
	Bind       PluginSet `json:"bind,omitempty"`
}

// PluginSet enables and disables plugins at one point. Disabled "*"
// disables every default plugin there. Enabled plugins come after the
// remaining defaults, in order; enabling a default plugin again only sets
// its weight.
type PluginSet struct {
	Enabled  []Plugin `json:"enabled,omitempty"`
	Disabled []Plugin `json:"disabled,omitempty"`
}

// Plugin names a plugin; Weight matters for Score (1–100, 0 = default).
type Plugin struct {
	Name   string `json:"name"`
	Weight int32  `json:"weight,omitempty"`
}

// Default returns the configuration used without a file.
func Default() *Configuration {
	c := &Configuration{}
	c.SetDefaults()
	return c
}

// Load reads, defaults and validates the file at path.
func Load(path string) (*Configuration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scheduler config: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", path, err)
	}
	return c, nil
}

// Parse reads YAML (or JSON); unknown fields are errors.
func Parse(data []byte) (*Configuration, error) {
	c := &Configuration{}
	if err := yaml.UnmarshalStrict(data, c); err != nil {
		return nil, err
	}
	if c.APIVersion != "" && c.APIVersion != APIVersion {
		return nil, fmt.Errorf("apiVersion %q: only %s is understood", c.APIVersion, APIVersion)
	}
	if c.Kind != "" && c.Kind != Kind {
		return nil, fmt.Errorf("kind %q: want %s", c.Kind, Kind)
	}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// SetDefaults fills what is unset.
func (c *Configuration) SetDefaults() {
	c.APIVersion, c.Kind = APIVersion, Kind
	if c.Parallelism == 0 {
		c.Parallelism = DefaultParallelism
	}
	if c.PodInitialBackoffSeconds == 0 {
		c.PodInitialBackoffSeconds = DefaultPodInitialBackoffSeconds
	}
	if c.PodMaxBackoffSeconds == 0 {
		c.PodMaxBackoffSeconds = max(DefaultPodMaxBackoffSeconds, c.PodInitialBackoffSeconds)
	}
	if len(c.Profiles) == 0 {
		c.Profiles = []Profile{{}}
	}
	for i := range c.Profiles {
		if c.Profiles[i].SchedulerName == "" {
			c.Profiles[i].SchedulerName = corev1.DefaultSchedulerName
		}
	}
}

// Validate checks ranges and names.
func (c *Configuration) Validate() error {
	var errs []error
	if c.Parallelism < 1 {
		errs = append(errs, fmt.Errorf("parallelism %d: must be at least 1", c.Parallelism))
	}
	if err := validPercentage("percentageOfNodesToScore", c.PercentageOfNodesToScore); err != nil {
		errs = append(errs, err)
	}
	if c.PodInitialBackoffSeconds < 1 {
		errs = append(errs, fmt.Errorf("podInitialBackoffSeconds %d: must be at least 1", c.PodInitialBackoffSeconds))
	}
	if c.PodMaxBackoffSeconds < c.PodInitialBackoffSeconds {
		errs = append(errs, fmt.Errorf("podMaxBackoffSeconds %d: must be at least podInitialBackoffSeconds %d", c.PodMaxBackoffSeconds, c.PodInitialBackoffSeconds))
	}
	seen := map[string]bool{}
	for i, p := range c.Profiles {
		if seen[p.SchedulerName] {
			errs = append(errs, fmt.Errorf("profiles[%d]: duplicate schedulerName %q", i, p.SchedulerName))
		}
		seen[p.SchedulerName] = true
		if err := validPercentage(fmt.Sprintf("profiles[%d].percentageOfNodesToScore", i), p.PercentageOfNodesToScore); err != nil {
			errs = append(errs, err)
		}
		if p.Plugins == nil {
			continue
		}
		for point, set := range p.Plugins.Points() {
			for _, pl := range append(append([]Plugin(nil), set.Enabled...), set.Disabled...) {
				if pl.Name == "" {
					errs = append(errs, fmt.Errorf("profiles[%d].plugins.%s: a plugin without a name", i, point))
				}
			}
			for _, pl := range set.Enabled {
				if pl.Weight < 0 || pl.Weight > 100 {
					errs = append(errs, fmt.Errorf("profiles[%d].plugins.%s %s: weight %d not in 0–100", i, point, pl.Name, pl.Weight))
				}
			}
		}
	}
	return errors.Join(errs...)
}

func validPercentage(field string, p *int32) error {
	if p != nil && (*p < 0 || *p > 100) {
		return fmt.Errorf("%s %d: not in 0–100", field, *p)
	}
	return nil
}

// Extension point names, as in the file.
const (
	PointMultiPoint = "multiPoint"
	PointPreFilter  = "preFilter"
	PointFilter     = "filter"
	PointPostFilter = "postFilter"
	PointPreScore   = "preScore"
	PointScore      = "score"
	PointReserve    = "reserve"
	PointBind       = "bind"
)

// Points returns each extension point's set by its file name.
func (p *Plugins) Points() map[string]PluginSet {
	return map[string]PluginSet{
		PointMultiPoint: p.MultiPoint, PointPreFilter: p.PreFilter, PointFilter: p.Filter,
		PointPostFilter: p.PostFilter, PointPreScore: p.PreScore, PointScore: p.Score,
		PointReserve: p.Reserve, PointBind: p.Bind,
	}
}
