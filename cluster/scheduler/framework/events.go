package framework

// ActionType is a bit set of what happened to an object.
type ActionType uint32

const (
	Add ActionType = 1 << iota
	Delete
	UpdateNodeAllocatable
	UpdateNodeLabel
	UpdateNodeTaint // taints or spec.unschedulable
	UpdatePodLabel
	UpdatePodRequest

	// Update is every kind of update.
	Update = UpdateNodeAllocatable | UpdateNodeLabel | UpdateNodeTaint | UpdatePodLabel | UpdatePodRequest
	// All is every action.
	All = Add | Delete | Update
)

// EventResource is the kind of object an event is about.
type EventResource string

const (
	// Node is a Node object.
	Node EventResource = "Node"
	// AssignedPod is a pod bound to a node (and counted in the cache).
	AssignedPod EventResource = "AssignedPod"
	// WildCard is every resource, for events that may matter to any pod
	// (the periodic flush).
	WildCard EventResource = "*"
)

// ClusterEvent is a change in the cluster that may make pending pods fit.
type ClusterEvent struct {
	Resource   EventResource
	ActionType ActionType
	Label      string
}

// Match reports whether a registered interest r covers the event e.
func (r ClusterEvent) Match(e ClusterEvent) bool {
	if e.Resource == WildCard || r.Resource == WildCard {
		return true
	}
	return r.Resource == e.Resource && r.ActionType&e.ActionType != 0
}

// Events the scheduler raises.
var (
	EventNodeAdd          = ClusterEvent{Resource: Node, ActionType: Add, Label: "NodeAdd"}
	EventAssignedPodAdd   = ClusterEvent{Resource: AssignedPod, ActionType: Add, Label: "AssignedPodAdd"}
	EventAssignedPodDel   = ClusterEvent{Resource: AssignedPod, ActionType: Delete, Label: "AssignedPodDelete"}
	EventUnschedulableTTL = ClusterEvent{Resource: WildCard, ActionType: All, Label: "UnschedulableTimeout"}
)
