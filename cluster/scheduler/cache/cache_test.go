package cache

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kstep-dev/kstep/cluster/scheduler/internal/st"
)

func requestedCPU(t *testing.T, c *Cache, node string) int64 {
	t.Helper()
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	ni := s.Get(node)
	if ni == nil {
		t.Fatalf("node %s not in snapshot", node)
	}
	return ni.Requested.MilliCPU
}

func TestAssumeConfirmForgetExpire(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	c := New(30*time.Second, clk)
	c.AddNode(st.MakeNode().Name("n1").Obj())
	c.AddNode(st.MakeNode().Name("n2").Obj())
	p := st.MakePod().Name("p").Req("cpu", "1").Node("n1").Obj()

	if err := c.AssumePod(p); err != nil {
		t.Fatal(err)
	}
	if err := c.AssumePod(p); err == nil {
		t.Fatal("assumed twice")
	}
	if got := requestedCPU(t, c, "n1"); got != 1000 {
		t.Fatalf("assumed pod not accounted: %d", got)
	}
	// Forget undoes the assumption.
	if err := c.ForgetPod(p); err != nil {
		t.Fatal(err)
	}
	if got := requestedCPU(t, c, "n1"); got != 0 {
		t.Fatalf("forgotten pod still accounted: %d", got)
	}

	// Assume, finish binding, confirm: never expires.
	_ = c.AssumePod(p)
	_ = c.FinishBinding(p)
	_ = c.AddPod(p)
	clk.Step(time.Minute)
	if exp := c.CleanupExpired(); len(exp) != 0 {
		t.Fatalf("confirmed pod expired: %v", exp)
	}
	if c.IsAssumed(p) {
		t.Fatal("confirmed pod still assumed")
	}
	if err := c.ForgetPod(p); err == nil {
		t.Fatal("forgot a confirmed pod")
	}
	_ = c.RemovePod(p)

	// Assumed and bound but never confirmed: expires after the TTL,
	// counted from FinishBinding, not from AssumePod.
	_ = c.AssumePod(p)
	clk.Step(time.Minute)
	if exp := c.CleanupExpired(); len(exp) != 0 {
		t.Fatal("expired before its binding finished")
	}
	_ = c.FinishBinding(p)
	clk.Step(29 * time.Second)
	if exp := c.CleanupExpired(); len(exp) != 0 {
		t.Fatal("expired early")
	}
	clk.Step(2 * time.Second)
	if exp := c.CleanupExpired(); len(exp) != 1 {
		t.Fatalf("expired %d, want 1", len(exp))
	}
	if got := requestedCPU(t, c, "n1"); got != 0 {
		t.Fatalf("expired pod still accounted: %d", got)
	}
}

func TestConfirmOnAnotherNode(t *testing.T) {
	c := New(0, nil)
	c.AddNode(st.MakeNode().Name("n1").Obj())
	c.AddNode(st.MakeNode().Name("n2").Obj())
	assumed := st.MakePod().Name("p").Req("cpu", "1").Node("n1").Obj()
	_ = c.AssumePod(assumed)
	actual := assumed.DeepCopy()
	actual.Spec.NodeName = "n2"
	_ = c.AddPod(actual)
	if requestedCPU(t, c, "n1") != 0 || requestedCPU(t, c, "n2") != 1000 {
		t.Fatal("the apiserver's node did not win")
	}
}

func TestSnapshotIncremental(t *testing.T) {
	c := New(0, nil)
	for _, n := range []string{"a", "b", "c"} {
		c.AddNode(st.MakeNode().Name(n).Obj())
	}
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	if s.NumNodes() != 3 {
		t.Fatalf("nodes %d", s.NumNodes())
	}
	a, b := s.Get("a"), s.Get("b")
	genB := b.Generation

	_ = c.AddPod(st.MakePod().Name("p").Req("cpu", "1").Node("a").Obj())
	c.UpdateSnapshot(s)
	if s.Get("a") != a || a.Requested.MilliCPU != 1000 {
		t.Fatal("changed node not updated in place")
	}
	if b.Generation != genB {
		t.Fatal("unchanged node was copied")
	}

	// The snapshot is a copy: later cache changes do not reach it.
	_ = c.AddPod(st.MakePod().Name("q").Req("cpu", "1").Node("a").Obj())
	if a.Requested.MilliCPU != 1000 {
		t.Fatal("snapshot changed without UpdateSnapshot")
	}

	c.RemoveNode(st.MakeNode().Name("b").Obj())
	c.AddNode(st.MakeNode().Name("d").Obj())
	c.UpdateSnapshot(s)
	var names []string
	for _, ni := range s.List() {
		names = append(names, ni.Node().Name)
	}
	if len(names) != 3 || names[0] != "a" || names[1] != "c" || names[2] != "d" || s.Get("b") != nil {
		t.Fatalf("after remove b, add d: %v", names)
	}

	// Anti-affinity lists follow pods in and out.
	anti := st.MakePod().Name("anti").Node("c").PodAntiAffinity("app", "x", corev1.LabelHostname).Obj()
	_ = c.AddPod(anti)
	c.UpdateSnapshot(s)
	if l := s.HavePodsWithRequiredAntiAffinityList(); len(l) != 1 || l[0].Node().Name != "c" {
		t.Fatalf("anti-affinity list %v", l)
	}
	_ = c.RemovePod(anti)
	c.UpdateSnapshot(s)
	if l := s.HavePodsWithRequiredAntiAffinityList(); len(l) != 0 {
		t.Fatalf("anti-affinity list after removal %v", l)
	}
}

func TestPodsBeforeTheirNode(t *testing.T) {
	c := New(0, nil)
	_ = c.AddPod(st.MakePod().Name("p").Req("cpu", "1").Node("late").Obj())
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	if s.NumNodes() != 0 {
		t.Fatal("a node without its Node object was offered")
	}
	c.AddNode(st.MakeNode().Name("late").Obj())
	c.UpdateSnapshot(s)
	if ni := s.Get("late"); ni == nil || ni.Requested.MilliCPU != 1000 {
		t.Fatal("pod added before its node not accounted")
	}
}

func TestImageStates(t *testing.T) {
	c := New(0, nil)
	c.AddNode(st.MakeNode().Name("a").Images(map[string]int64{"img:1": 100}).Obj())
	c.AddNode(st.MakeNode().Name("b").Images(map[string]int64{"img:1": 100}).Obj())
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	if got := s.Get("a").ImageStates["img:1"]; got == nil || got.NumNodes != 2 || got.Size != 100 {
		t.Fatalf("image state %+v", got)
	}
}
