package plugins

import (
	"github.com/kstep-dev/kstep/cluster/scheduler/config"
	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins/defaultbinder"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins/defaultpreemption"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins/imagelocality"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins/interpodaffinity"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins/nodeaffinity"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins/nodename"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins/nodeports"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins/noderesources"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins/nodeunschedulable"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins/podtopologyspread"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins/tainttoleration"
)

// NewRegistry returns every in-tree plugin by name. A caller may add or
// replace entries (tests swap the binder).
func NewRegistry() framework.Registry {
	return framework.Registry{
		nodename.Name:                        nodename.New,
		nodeports.Name:                       nodeports.New,
		nodeunschedulable.Name:               nodeunschedulable.New,
		tainttoleration.Name:                 tainttoleration.New,
		nodeaffinity.Name:                    nodeaffinity.New,
		noderesources.FitName:                noderesources.NewFit,
		noderesources.BalancedAllocationName: noderesources.NewBalancedAllocation,
		imagelocality.Name:                   imagelocality.New,
		podtopologyspread.Name:               podtopologyspread.New,
		interpodaffinity.Name:                interpodaffinity.New,
		defaultbinder.Name:                   defaultbinder.New,
		defaultpreemption.Name:               defaultpreemption.New,
	}
}

// DefaultPlugins is the default profile's multi-point list, in the order
// filters run (cheap, unresolvable checks first, as upstream, so a
// rejected node reports the same first reason upstream would), with
// upstream's score weights.
func DefaultPlugins() []config.Plugin {
	return []config.Plugin{
		{Name: nodeunschedulable.Name},
		{Name: nodename.Name},
		{Name: tainttoleration.Name, Weight: 3},
		{Name: nodeaffinity.Name, Weight: 2},
		{Name: nodeports.Name},
		{Name: noderesources.FitName, Weight: 1},
		{Name: podtopologyspread.Name, Weight: 2},
		{Name: interpodaffinity.Name, Weight: 2},
		{Name: noderesources.BalancedAllocationName, Weight: 1},
		{Name: imagelocality.Name, Weight: 1},
		{Name: defaultpreemption.Name},
		{Name: defaultbinder.Name},
	}
}
