package framework

import (
	"context"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/config"
)

// fake plugins of each shape.
type filterScore struct{ name string }

func (p *filterScore) Name() string { return p.name }
func (p *filterScore) Filter(context.Context, *CycleState, *corev1.Pod, *NodeInfo) *Status {
	return nil
}
func (p *filterScore) Score(context.Context, *CycleState, *corev1.Pod, *NodeInfo) (int64, *Status) {
	return 10, nil
}

type filterOnly struct{ name string }

func (p *filterOnly) Name() string { return p.name }
func (p *filterOnly) Filter(context.Context, *CycleState, *corev1.Pod, *NodeInfo) *Status {
	return nil
}

type binder struct{}

func (binder) Name() string                                                   { return "Binder" }
func (binder) Bind(context.Context, *CycleState, *corev1.Pod, string) *Status { return nil }

func testRegistry() Registry {
	return Registry{
		"A":      func(Handle) (Plugin, error) { return &filterScore{"A"}, nil },
		"B":      func(Handle) (Plugin, error) { return &filterScore{"B"}, nil },
		"F":      func(Handle) (Plugin, error) { return &filterOnly{"F"}, nil },
		"Extra":  func(Handle) (Plugin, error) { return &filterScore{"Extra"}, nil },
		"Binder": func(Handle) (Plugin, error) { return binder{}, nil },
	}
}

var testDefaults = []config.Plugin{{Name: "F"}, {Name: "A", Weight: 3}, {Name: "B"}, {Name: "Binder"}}

func TestNewResolvesProfiles(t *testing.T) {
	tests := []struct {
		name    string
		plugins *config.Plugins
		filter  []string
		score   []config.Plugin
		err     string
	}{
		{
			name:   "defaults",
			filter: []string{"F", "A", "B"},
			score:  []config.Plugin{{Name: "A", Weight: 3}, {Name: "B", Weight: 1}},
		},
		{
			name:    "disable at one point only",
			plugins: &config.Plugins{Score: config.PluginSet{Disabled: []config.Plugin{{Name: "A"}}}},
			filter:  []string{"F", "A", "B"},
			score:   []config.Plugin{{Name: "B", Weight: 1}},
		},
		{
			name:    "disable everywhere with multiPoint",
			plugins: &config.Plugins{MultiPoint: config.PluginSet{Disabled: []config.Plugin{{Name: "A"}}}},
			filter:  []string{"F", "B"},
			score:   []config.Plugin{{Name: "B", Weight: 1}},
		},
		{
			name: "disable all scores, enable one with a weight",
			plugins: &config.Plugins{Score: config.PluginSet{
				Disabled: []config.Plugin{{Name: "*"}}, Enabled: []config.Plugin{{Name: "Extra", Weight: 7}},
			}},
			filter: []string{"F", "A", "B"},
			score:  []config.Plugin{{Name: "Extra", Weight: 7}},
		},
		{
			name:    "re-enabling a default changes its weight only",
			plugins: &config.Plugins{Score: config.PluginSet{Enabled: []config.Plugin{{Name: "B", Weight: 5}}}},
			filter:  []string{"F", "A", "B"},
			score:   []config.Plugin{{Name: "A", Weight: 3}, {Name: "B", Weight: 5}},
		},
		{
			name:    "unknown plugin",
			plugins: &config.Plugins{Filter: config.PluginSet{Enabled: []config.Plugin{{Name: "Nope"}}}},
			err:     `plugin "Nope" is not registered`,
		},
		{
			name:    "plugin at a point it does not implement",
			plugins: &config.Plugins{Score: config.PluginSet{Enabled: []config.Plugin{{Name: "F"}}}},
			err:     `does not implement the score extension point`,
		},
		{
			name:    "no binder",
			plugins: &config.Plugins{Bind: config.PluginSet{Disabled: []config.Plugin{{Name: "*"}}}},
			err:     "no bind plugin",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := New(testRegistry(), testDefaults, config.Profile{SchedulerName: "s", Plugins: tt.plugins}, Options{})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var filter []string
			for _, p := range f.EnabledPlugins()[config.PointFilter] {
				filter = append(filter, p.Name)
			}
			if !reflect.DeepEqual(filter, tt.filter) {
				t.Errorf("filter = %v, want %v", filter, tt.filter)
			}
			if got := f.EnabledPlugins()[config.PointScore]; !reflect.DeepEqual(got, tt.score) {
				t.Errorf("score = %v, want %v", got, tt.score)
			}
		})
	}
}

func TestRunScorePluginsWeighs(t *testing.T) {
	f, err := New(testRegistry(), testDefaults, config.Profile{SchedulerName: "s"}, Options{Parallelizer: NewParallelizer(2)})
	if err != nil {
		t.Fatal(err)
	}
	var nodes []*NodeInfo
	for _, name := range []string{"n1", "n2", "n3"} {
		ni := NewNodeInfo()
		ni.SetNode(&corev1.Node{})
		ni.Node().Name = name
		nodes = append(nodes, ni)
	}
	scores, s := f.RunScorePlugins(context.Background(), NewCycleState(), &corev1.Pod{}, nodes)
	if !s.IsSuccess() {
		t.Fatal(s)
	}
	for _, ns := range scores {
		if ns.Score != 10*3+10*1 {
			t.Errorf("%s: %d, want 40", ns.Name, ns.Score)
		}
	}
}

func TestPodMayFitAfter(t *testing.T) {
	f := &Framework{events: map[string][]ClusterEvent{
		"Fit":   {{Resource: AssignedPod, ActionType: Delete}, {Resource: Node, ActionType: Add | UpdateNodeAllocatable}},
		"Taint": {{Resource: Node, ActionType: Add | UpdateNodeTaint}},
	}}
	tests := []struct {
		rejected map[string]bool
		ev       ClusterEvent
		want     bool
	}{
		{map[string]bool{"Fit": true}, EventAssignedPodDel, true},
		{map[string]bool{"Taint": true}, EventAssignedPodDel, false},
		{map[string]bool{"Taint": true}, ClusterEvent{Resource: Node, ActionType: UpdateNodeLabel}, false},
		{map[string]bool{"Taint": true}, ClusterEvent{Resource: Node, ActionType: UpdateNodeTaint}, true},
		{map[string]bool{"Taint": true, "Fit": true}, EventAssignedPodDel, true},
		{nil, EventAssignedPodDel, true},
		{map[string]bool{"Unknown": true}, EventAssignedPodDel, true},
		{map[string]bool{"Taint": true}, EventUnschedulableTTL, true},
	}
	for _, tt := range tests {
		if got := f.PodMayFitAfter(tt.rejected, tt.ev); got != tt.want {
			t.Errorf("PodMayFitAfter(%v, %v) = %v, want %v", tt.rejected, tt.ev.Label, got, tt.want)
		}
	}
}
