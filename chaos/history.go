package chaos

import (
	"sort"
	"time"
)

// History is everything the observers recorded during a run, in the order
// they saw it. The analysis and the invariant checkers are pure functions
// of it, so they are tested on constructed histories.
type History struct {
	// Start is when the load started; fault offsets count from it.
	Start time.Time
	End   time.Time
	// WritePeriod is the probe's time between writes (1/writeQPS): the
	// resolution of a time measured by the first write rejected or
	// acknowledged after a fault.
	WritePeriod time.Duration
	// EtcdLeader: each change of the leader the members report ("" while
	// none answers with one).
	EtcdLeader []LeaderSample
	// Leases: each change of a Lease's holder, by lease name.
	Leases map[string][]LeaderSample
	// Nodes: each change of a node's Ready condition.
	Nodes []NodeSample
	// Writes are the probe's writes, acknowledged or failed.
	Writes []ProbeWrite
	// Pods are the pod events the first watcher saw, in order.
	Pods []PodEvent
	// RS are the ReplicaSet spec.replicas changes the watcher saw.
	RS []RSEvent
	// Watchers are the resourceVersions each throughout-watcher saw.
	Watchers []WatcherLog
	// Steps are the actors' trace events (pod.create.sent, pod.bound, ...),
	// read at the end.
	Steps []StepEvent
	// Evictions are the pods the node lifecycle controller evicted (its
	// TaintManagerEviction events), read at the end.
	Evictions []Eviction
}

// Eviction is one pod the node lifecycle controller deleted off a node.
type Eviction struct {
	At   time.Time
	Pod  string // namespace/name
	Node string // the node the watcher last saw it on ("" if never seen)
}

// LeaderSample is who led from At on.
type LeaderSample struct {
	At     time.Time `json:"at"`
	Holder string    `json:"holder"`
}

// NodeSample is a node's Ready condition from At on.
type NodeSample struct {
	At    time.Time `json:"at"`
	Node  string    `json:"node"`
	Ready bool      `json:"ready"`
	// Gone: the Node was deleted (Ready false until it is registered
	// again).
	Gone bool `json:"gone,omitempty"`
}

// ProbeWrite is one probe write: sent at Sent, acknowledged at Acked (zero
// if it failed, with Err).
type ProbeWrite struct {
	Key   string    `json:"key"` // namespace/name
	UID   string    `json:"uid,omitempty"`
	RV    int64     `json:"rv,omitempty"`
	Sent  time.Time `json:"sent"`
	Acked time.Time `json:"acked,omitzero"`
	Err   string    `json:"err,omitempty"`
	// Code is the HTTP status of the last error's answer (0: no answer,
	// e.g. a timeout or a broken connection).
	Code int32 `json:"code,omitempty"`
	// LongestWaitMS is the longest any one request of this write (its
	// attempts, and the read that recognises an attempt that landed)
	// waited for its answer, success, error or client timeout.
	LongestWaitMS float64 `json:"longest_wait_ms"`
	// Done is when its last request ended.
	Done time.Time `json:"done,omitzero"`
}

// PodEvent is one watch event of a pod: its state after the event.
type PodEvent struct {
	At      time.Time
	RV      int64
	UID     string
	Key     string
	Owner   string // the owning ReplicaSet's namespace/name, "" if none
	Node    string
	Ready   bool
	Active  bool // counts toward its ReplicaSet: not terminating, not finished
	Deleted bool
}

// RSEvent is a ReplicaSet's desired replicas from At on (-1: deleted).
type RSEvent struct {
	At       time.Time
	Key      string
	Replicas int32
}

// StepEvent is one actor's trace stamp.
type StepEvent struct {
	At    time.Time
	Step  string
	Actor string
	UID   string
}

// leaderAt returns who led at t, by the samples before it.
func leaderAt(samples []LeaderSample, t time.Time) string {
	h := ""
	for _, s := range samples {
		if s.At.After(t) {
			break
		}
		h = s.Holder
	}
	return h
}

// sortHistory puts every series in time order (observers append in order;
// merged series may not be).
func (h *History) sortHistory() {
	sort.SliceStable(h.Writes, func(i, j int) bool { return h.Writes[i].Sent.Before(h.Writes[j].Sent) })
	sort.SliceStable(h.Steps, func(i, j int) bool { return h.Steps[i].At.Before(h.Steps[j].At) })
}
