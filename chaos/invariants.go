package chaos

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// The invariants, by the names gates and reports use.
const (
	InvLostWrites    = "lost-writes"
	InvRSOver        = "rs-over-replicas"
	InvBoundTwice    = "pod-bound-twice"
	InvHashKV        = "etcd-hash-mismatch"
	InvConvergence   = "unconverged-replicasets"
	maxInvariantLine = 10
)

// Invariant is one checked property: Count is how many violations were
// found (for rs-over-replicas: the largest excess seen), 0 is good.
type Invariant struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
	// Checked is false when the check could not run (Detail says why); a
	// gate treats an unchecked invariant as failed.
	Checked bool     `json:"checked"`
	Summary string   `json:"summary"`
	Detail  []string `json:"detail,omitempty"`
}

// OK reports whether the invariant was checked and holds.
func (i Invariant) OK() bool { return i.Checked && i.Count == 0 }

func (i *Invariant) add(format string, a ...any) {
	i.Count++
	if len(i.Detail) < maxInvariantLine {
		i.Detail = append(i.Detail, fmt.Sprintf(format, a...))
	}
}

// AckedWrite is a write a client got a success for: it must survive.
type AckedWrite struct {
	Op   string `json:"op"` // create, update, delete
	Kind string `json:"kind"`
	Key  string `json:"key"` // namespace/name
	UID  string `json:"uid"`
	RV   int64  `json:"rv"`
}

// CheckAckedWrites checks every acknowledged write against the final
// state (kind → key → UID, from the apiserver at the end) and etcd's
// history (revision → the etcd key last modified at that revision, for the
// writes' revisions; nil skips this half). A created object must still
// exist with its UID unless a later acknowledged write deleted it, and its
// revision must be in etcd's history.
func CheckAckedWrites(writes []AckedWrite, final map[string]map[string]string, history map[int64]bool) Invariant {
	inv := Invariant{Name: InvLostWrites, Checked: true}
	deleted := map[string]bool{}
	for _, w := range writes {
		if w.Op == "delete" {
			deleted[w.Kind+"/"+w.Key] = true
		}
	}
	for _, w := range writes {
		if w.Op != "create" {
			continue
		}
		if !deleted[w.Kind+"/"+w.Key] {
			if uid, ok := final[w.Kind][w.Key]; !ok {
				inv.add("%s %s (rv %d) acknowledged, missing at the end", w.Kind, w.Key, w.RV)
				continue
			} else if w.UID != "" && uid != w.UID {
				inv.add("%s %s acknowledged with uid %s, the end has uid %s", w.Kind, w.Key, w.UID, uid)
				continue
			}
		}
		if history != nil && w.RV != 0 && !history[w.RV] {
			inv.add("%s %s acknowledged at rv %d, which etcd's history does not hold", w.Kind, w.Key, w.RV)
		}
	}
	inv.Summary = fmt.Sprintf("%d acknowledged writes, %d lost", len(writes), inv.Count)
	return inv
}

// CheckRSOverReplicas replays what a watcher saw of pods and ReplicaSets
// and finds the largest number of active pods beyond a ReplicaSet's
// replicas at any moment a pod became active: its controller creating too
// many. After a scale down the pods beyond the new replicas are the
// controller's to delete, not an excess. Count is that largest excess (0:
// never over).
func CheckRSOverReplicas(pods []PodEvent, rs []RSEvent) Invariant {
	inv := Invariant{Name: InvRSOver, Checked: true}
	type state struct {
		owner  string
		active bool
	}
	live := map[string]state{}
	count := map[string]int32{}
	replicas := map[string]int32{}
	ri := 0
	var worst int32
	var worstAt time.Time
	var worstRS string
	for _, e := range pods {
		for ri < len(rs) && !rs[ri].At.After(e.At) {
			replicas[rs[ri].Key] = rs[ri].Replicas
			ri++
		}
		old, ok := live[e.UID]
		if ok && old.active && old.owner != "" {
			count[old.owner]--
		}
		grew := e.Active && !e.Deleted && !(ok && old.active && old.owner == e.Owner)
		if e.Deleted {
			delete(live, e.UID)
		} else {
			live[e.UID] = state{owner: e.Owner, active: e.Active}
			if e.Active && e.Owner != "" {
				count[e.Owner]++
			}
		}
		if e.Owner == "" || !grew {
			continue
		}
		want, known := replicas[e.Owner]
		if !known || want < 0 {
			continue
		}
		if over := count[e.Owner] - want; over > worst {
			worst, worstAt, worstRS = over, e.At, e.Owner
		}
	}
	inv.Count = int(worst)
	if worst > 0 {
		inv.Detail = []string{fmt.Sprintf("%s had %d pods beyond its replicas at %s", worstRS, worst, worstAt.UTC().Format(time.RFC3339Nano))}
	}
	inv.Summary = fmt.Sprintf("max pods beyond replicas seen: %d (over %d pod events)", worst, len(pods))
	return inv
}

// CheckBoundOnce finds pods a watcher saw on two different nodes.
func CheckBoundOnce(pods []PodEvent) Invariant {
	inv := Invariant{Name: InvBoundTwice, Checked: true}
	node := map[string]string{}
	reported := map[string]bool{}
	for _, e := range pods {
		if e.Node == "" {
			continue
		}
		if n, ok := node[e.UID]; ok && n != e.Node && !reported[e.UID] {
			reported[e.UID] = true
			inv.add("pod %s (uid %s) bound to %s, then to %s", e.Key, e.UID, n, e.Node)
		}
		if _, ok := node[e.UID]; !ok {
			node[e.UID] = e.Node
		}
	}
	inv.Summary = fmt.Sprintf("%d pods seen bound, %d bound twice", len(node), inv.Count)
	return inv
}

// MemberHash is one etcd member's HashKV at a revision.
type MemberHash struct {
	Member string `json:"member"`
	Rev    int64  `json:"rev"`
	Hash   uint32 `json:"hash"`
	Err    string `json:"err,omitempty"`
}

// CheckHashes checks that every member reported the same hash at the same
// revision.
func CheckHashes(hashes []MemberHash) Invariant {
	inv := Invariant{Name: InvHashKV, Checked: len(hashes) > 0}
	byHash := map[uint32][]string{}
	for _, h := range hashes {
		if h.Err != "" {
			inv.Checked = false
			inv.Detail = append(inv.Detail, fmt.Sprintf("%s: %s", h.Member, h.Err))
			continue
		}
		if h.Rev != hashes[0].Rev {
			inv.add("%s hashed revision %d, %s revision %d", h.Member, h.Rev, hashes[0].Member, hashes[0].Rev)
		}
		byHash[h.Hash] = append(byHash[h.Hash], h.Member)
	}
	if len(byHash) > 1 {
		keys := make([]uint32, 0, len(byHash))
		for k := range byHash {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
		for _, k := range keys {
			inv.add("hash %08x: %v", k, byHash[k])
		}
	}
	rev := int64(0)
	if len(hashes) > 0 {
		rev = hashes[0].Rev
	}
	inv.Summary = fmt.Sprintf("%d members, %d distinct hashes at revision %d", len(hashes), len(byHash), rev)
	return inv
}

// RSStatus is a ReplicaSet at the end of the convergence wait.
type RSStatus struct {
	Key      string
	Replicas int32
	Ready    int32
}

// CheckConvergence lists ReplicaSets not Ready when the wait ended.
func CheckConvergence(rs []RSStatus, waited time.Duration) Invariant {
	inv := Invariant{Name: InvConvergence, Checked: true}
	for _, r := range rs {
		if r.Ready < r.Replicas {
			inv.add("%s: %d of %d Ready", r.Key, r.Ready, r.Replicas)
		}
	}
	inv.Summary = fmt.Sprintf("%d of %d ReplicaSets Ready (waited %v)", len(rs)-inv.Count, len(rs), waited.Round(time.Millisecond))
	return inv
}

// InvRunningPods is "running pods unaffected": a container running on a
// real node before a fault keeps its container ID and restart count to
// the end of the run, whatever the control plane went through (upstream's
// promise: the control plane's death does not touch running workloads).
const InvRunningPods = "running-pods-unaffected"

// RunningContainer is one container of a pod on a real node, as its
// status reported it.
type RunningContainer struct {
	PodUID    string `json:"pod_uid"`
	Pod       string `json:"pod"` // namespace/name
	Node      string `json:"node"`
	Container string `json:"container"`
	ID        string `json:"id"`
	Restarts  int32  `json:"restarts"`
}

func (c RunningContainer) key() string { return c.PodUID + "/" + c.Container }

// CheckRunningPods compares the containers first seen running before a
// fault (before) with the same pods' containers at the end (after): a
// changed container ID or a higher restart count is a violation. Pods gone
// by the end (deleted, or on a node a fault took down: lost) are skipped;
// no container seen before any fault means the invariant could not be
// checked.
func CheckRunningPods(before map[string]RunningContainer, after []RunningContainer, lost map[string]bool) Invariant {
	inv := Invariant{Name: InvRunningPods, Checked: true}
	if len(before) == 0 {
		inv.Checked = false
		inv.Summary = "no container ran on a real node before a fault: nothing to check"
		return inv
	}
	now := map[string]RunningContainer{}
	for _, c := range after {
		now[c.key()] = c
	}
	keys := make([]string, 0, len(before))
	for k := range before {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	compared := 0
	for _, k := range keys {
		b := before[k]
		a, ok := now[k]
		if !ok || lost[b.Node] {
			continue
		}
		compared++
		switch {
		case a.ID != b.ID:
			inv.add("%s container %s on %s: container %s became %s", b.Pod, b.Container, b.Node, short(b.ID), short(a.ID))
		case a.Restarts > b.Restarts:
			inv.add("%s container %s on %s: restarted %d times", b.Pod, b.Container, b.Node, a.Restarts-b.Restarts)
		}
	}
	inv.Summary = fmt.Sprintf("%d containers on real nodes followed through the faults, %d restarted or replaced", compared, inv.Count)
	return inv
}

func short(id string) string {
	if _, after, ok := strings.Cut(id, "://"); ok {
		id = after
	}
	if len(id) > 12 {
		id = id[:12]
	}
	return id
}
