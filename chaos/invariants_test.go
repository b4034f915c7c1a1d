package chaos

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func TestCheckAckedWrites(t *testing.T) {
	final := map[string]map[string]string{
		"ConfigMap":  {"ns/a": "u1", "ns/b": "u2-new"},
		"ReplicaSet": {"ns/rs-0": "r0"},
	}
	history := map[int64]bool{10: true, 11: true, 12: true}
	for _, tc := range []struct {
		name   string
		writes []AckedWrite
		count  int
		says   string
	}{
		{"all present", []AckedWrite{
			{Op: "create", Kind: "ConfigMap", Key: "ns/a", UID: "u1", RV: 10},
			{Op: "create", Kind: "ReplicaSet", Key: "ns/rs-0", UID: "r0", RV: 11},
		}, 0, ""},
		{"missing at the end", []AckedWrite{{Op: "create", Kind: "ConfigMap", Key: "ns/gone", UID: "u9", RV: 12}}, 1, "missing at the end"},
		{"replaced by another object", []AckedWrite{{Op: "create", Kind: "ConfigMap", Key: "ns/b", UID: "u2", RV: 12}}, 1, "the end has uid u2-new"},
		{"deleted by a later acknowledged write", []AckedWrite{
			{Op: "create", Kind: "ConfigMap", Key: "ns/gone", UID: "u9", RV: 12},
			{Op: "delete", Kind: "ConfigMap", Key: "ns/gone"},
		}, 0, ""},
		{"not in etcd's history", []AckedWrite{{Op: "create", Kind: "ConfigMap", Key: "ns/a", UID: "u1", RV: 99}}, 1, "etcd's history does not hold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := CheckAckedWrites(tc.writes, final, history)
			if inv.Count != tc.count || !inv.Checked {
				t.Fatalf("count %d checked %v, want %d: %v", inv.Count, inv.Checked, tc.count, inv.Detail)
			}
			if tc.says != "" && !strings.Contains(strings.Join(inv.Detail, "\n"), tc.says) {
				t.Errorf("detail %v does not say %q", inv.Detail, tc.says)
			}
		})
	}
}

func pod(s float64, uid, owner, node string, active bool) PodEvent {
	return PodEvent{At: at(s), UID: uid, Key: "ns/" + uid, Owner: owner, Node: node, Active: active}
}

func TestCheckRSOverReplicas(t *testing.T) {
	rs := []RSEvent{{At: at(0), Key: "ns/rs", Replicas: 2}}
	for _, tc := range []struct {
		name string
		pods []PodEvent
		want int
	}{
		{"exactly replicas", []PodEvent{pod(1, "a", "ns/rs", "", true), pod(1, "b", "ns/rs", "", true)}, 0},
		{"a terminating pod does not count", []PodEvent{
			pod(1, "a", "ns/rs", "n1", true), pod(1, "b", "ns/rs", "n1", true),
			pod(2, "a", "ns/rs", "n1", false), pod(2.1, "c", "ns/rs", "", true),
		}, 0},
		{"one too many, then two", []PodEvent{
			pod(1, "a", "ns/rs", "", true), pod(1, "b", "ns/rs", "", true), pod(1, "c", "ns/rs", "", true),
			pod(1.5, "d", "ns/rs", "", true),
			{At: at(2), UID: "d", Owner: "ns/rs", Deleted: true},
		}, 2},
		{"a pod updated many times counts once", []PodEvent{
			pod(1, "a", "ns/rs", "", true), pod(2, "a", "ns/rs", "n1", true), pod(3, "a", "ns/rs", "n1", true),
		}, 0},
		{"unknown ReplicaSet is not judged", []PodEvent{pod(1, "a", "ns/other", "", true), pod(1, "b", "ns/other", "", true), pod(1, "c", "ns/other", "", true)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if inv := CheckRSOverReplicas(tc.pods, rs); inv.Count != tc.want {
				t.Errorf("max excess %d, want %d (%s)", inv.Count, tc.want, inv.Summary)
			}
		})
	}
}

func TestCheckBoundOnce(t *testing.T) {
	ok := []PodEvent{pod(1, "a", "", "", true), pod(2, "a", "", "n1", true), pod(3, "a", "", "n1", true)}
	if inv := CheckBoundOnce(ok); inv.Count != 0 {
		t.Errorf("bound once: %v", inv.Detail)
	}
	bad := append(ok, pod(4, "a", "", "n2", true))
	if inv := CheckBoundOnce(bad); inv.Count != 1 || !strings.Contains(inv.Detail[0], "bound to n1, then to n2") {
		t.Errorf("bound twice: %d %v", inv.Count, inv.Detail)
	}
}

func TestCheckHashes(t *testing.T) {
	same := []MemberHash{{Member: "etcd-0", Rev: 9, Hash: 1}, {Member: "etcd-1", Rev: 9, Hash: 1}, {Member: "etcd-2", Rev: 9, Hash: 1}}
	if inv := CheckHashes(same); !inv.OK() {
		t.Errorf("equal hashes: %+v", inv)
	}
	diff := []MemberHash{{Member: "etcd-0", Rev: 9, Hash: 1}, {Member: "etcd-1", Rev: 9, Hash: 2}}
	if inv := CheckHashes(diff); inv.OK() || inv.Count != 2 {
		t.Errorf("different hashes: %+v", inv)
	}
	unreachable := []MemberHash{{Member: "etcd-0", Rev: 9, Hash: 1}, {Member: "etcd-1", Err: "deadline exceeded"}}
	if inv := CheckHashes(unreachable); inv.Checked {
		t.Errorf("a member that did not answer was counted as checked: %+v", inv)
	}
}

func TestCheckConvergence(t *testing.T) {
	inv := CheckConvergence([]RSStatus{{Key: "a", Replicas: 1, Ready: 1}, {Key: "b", Replicas: 3, Ready: 2}}, time.Minute)
	if inv.Count != 1 || !strings.Contains(inv.Detail[0], "b: 2 of 3 Ready") {
		t.Errorf("%+v", inv)
	}
}

func TestRunningPods(t *testing.T) {
	c := func(uid, node, id string, restarts int32) RunningContainer {
		return RunningContainer{PodUID: uid, Pod: "ns/" + uid, Node: node, Container: "app", ID: id, Restarts: restarts}
	}
	before := map[string]RunningContainer{}
	for _, x := range []RunningContainer{c("a", "node-0", "containerd://1", 0), c("b", "node-0", "containerd://2", 0),
		c("c", "node-1", "containerd://3", 1), c("d", "node-1", "containerd://4", 0), c("e", "node-2", "containerd://5", 0)} {
		before[x.key()] = x
	}
	after := []RunningContainer{
		c("a", "node-0", "containerd://1", 0),  // untouched
		c("b", "node-0", "containerd://9", 0),  // replaced
		c("c", "node-1", "containerd://3", 2),  // restarted in place
		c("e", "node-2", "containerd://55", 0), // on a lost node: skipped
		// d is gone (deleted): skipped
	}
	inv := CheckRunningPods(before, after, map[string]bool{"node-2": true})
	if !inv.Checked || inv.Count != 2 {
		t.Fatalf("%+v, want 2 violations (b replaced, c restarted)", inv)
	}
	if inv := CheckRunningPods(before, after[:1], nil); !inv.OK() {
		t.Fatalf("untouched containers: %+v", inv)
	}
	if inv := CheckRunningPods(nil, after, nil); inv.Checked {
		t.Fatalf("nothing seen before a fault must be unchecked: %+v", inv)
	}
	// An unchecked invariant fails the gate.
	g, err := LoadGate("default")
	if err != nil {
		t.Fatal(err)
	}
	if Passed(g.Evaluate(nil, []Invariant{CheckRunningPods(nil, nil, nil)})) {
		t.Fatal("the default gate passed an unchecked running-pods-unaffected")
	}
}
