package scheduler

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kstep-dev/kstep/internal/testenv"
)

func priorityClass(t *testing.T, e *env, name string, value int32, never bool) {
	t.Helper()
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
	if never {
		policy := corev1.PreemptNever
		pc.PreemptionPolicy = &policy
	}
	if _, err := e.cs.SchedulingV1().PriorityClasses().Create(context.Background(), pc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func getPod(t *testing.T, e *env, name string) (*corev1.Pod, bool) {
	t.Helper()
	p, err := e.cs.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return p, true
}

// Preemption through a real apiserver: two nodes full of low-priority
// pods, one of them protected by a PodDisruptionBudget; a high-priority
// pod that fits only if a low one goes preempts the unprotected one (the
// DisruptionTarget condition, a Preempted Event, graceful deletion), is
// nominated to its node, and is bound there once its victim is gone; a
// medium-priority pod created meanwhile (preemptionPolicy Never: it may
// not preempt db either) does not take the room, and the metrics count
// the attempt and the victim.
func TestIntegrationPreemption(t *testing.T) {
	e := startEnv(t, testenv.NodeSpec{Name: "node-a", CPU: "2"}, testenv.NodeSpec{Name: "node-b", CPU: "2"})
	priorityClass(t, e, "low", 10, false)
	priorityClass(t, e, "medium", 500, true)
	priorityClass(t, e, "high", 1000, false)
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	e.run(t, Config{Metrics: m})
	ctx := context.Background()

	if _, err := e.cs.PolicyV1().PodDisruptionBudgets("default").Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptrIntStr(1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	db := pendingPod("db", "2")
	db.Labels = map[string]string{"app": "db"}
	db.Spec.PriorityClassName = "low"
	web := pendingPod("web", "2")
	web.Labels = map[string]string{"app": "web"}
	web.Spec.PriorityClassName = "low"
	create(t, e.cs, db, web)
	testenv.Eventually(t, 20*time.Second, "the low pods bound", func() bool { return count(boundPods(t, e.cs)) == 2 }, fastPoll)
	// The budget's status: no disruption allowed (the disruption
	// controller does not run here; write what it would).
	pdb, err := e.cs.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: 0, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}
	if _, err := e.cs.PolicyV1().PodDisruptionBudgets("default").UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the scheduler's PDB informer sees the status
	webPod, _ := getPod(t, e, "web")
	victimNode := webPod.Spec.NodeName

	high := pendingPod("high", "2")
	high.Spec.PriorityClassName = "high"
	created := time.Now()
	create(t, e.cs, high)
	testenv.Eventually(t, 20*time.Second, "high nominated", func() bool {
		p, _ := getPod(t, e, "high")
		return p.Status.NominatedNodeName != ""
	}, fastPoll)
	p, _ := getPod(t, e, "high")
	if p.Status.NominatedNodeName != victimNode {
		t.Fatalf("nominated to %s; the unprotected pod web is on %s", p.Status.NominatedNodeName, victimNode)
	}
	// The room is high's: a medium pod created now stays pending, and
	// being Never it preempts no one.
	med := pendingPod("medium", "2")
	med.Spec.PriorityClassName = "medium"
	create(t, e.cs, med)

	testenv.Eventually(t, 30*time.Second, "high bound", func() bool {
		p, _ := getPod(t, e, "high")
		return p.Spec.NodeName != ""
	}, fastPoll)
	t.Logf("high-priority pod bound %v after its creation", time.Since(created))
	if p, _ := getPod(t, e, "high"); p.Spec.NodeName != victimNode {
		t.Fatalf("high bound to %s, nominated %s", p.Spec.NodeName, victimNode)
	}
	if _, ok := getPod(t, e, "web"); ok {
		t.Fatal("the victim web is still there")
	}
	if p, ok := getPod(t, e, "db"); !ok || p.DeletionTimestamp != nil {
		t.Fatal("the protected pod db was preempted")
	}
	testenv.Eventually(t, 10*time.Second, "the Preempted event", func() bool {
		ev := events(t, e.cs, "web", "Preempted")
		return len(ev) == 1 && ev[0].Message == "Preempted by pod "+string(p.UID)+" on node "+victimNode
	}, fastPoll)
	time.Sleep(500 * time.Millisecond)
	if p, _ := getPod(t, e, "medium"); p.Spec.NodeName != "" {
		t.Fatalf("medium bound to %s", p.Spec.NodeName)
	}
	if ev := events(t, e.cs, "medium", ReasonFailedScheduling); len(ev) == 0 || !strings.HasSuffix(ev[len(ev)-1].Message, "preemption: not eligible due to preemptionPolicy=Never..") {
		t.Errorf("medium's FailedScheduling: %v", ev)
	}
	if got := counterValue(t, reg, "scheduler_preemption_attempts_total"); got < 1 {
		t.Errorf("scheduler_preemption_attempts_total = %v", got)
	}
	if n, sum := histogramValue(t, reg, "scheduler_preemption_victims"); n != 1 || sum != 1 {
		t.Errorf("scheduler_preemption_victims: %d observations summing %v, want one of 1", n, sum)
	}
}

// A victim gets upstream's DisruptionTarget condition before its deletion:
// a watch on it sees the condition (the stand-in kubelet finishes the
// deletion at once, so the pod is never read back, only watched).
func TestIntegrationPreemptionDisruptionTarget(t *testing.T) {
	e := startEnv(t, testenv.NodeSpec{Name: "node-a", CPU: "1"})
	priorityClass(t, e, "low", 10, false)
	priorityClass(t, e, "high", 1000, false)
	e.run(t, Config{})
	ctx := context.Background()
	low := pendingPod("low", "1")
	low.Spec.PriorityClassName = "low"
	create(t, e.cs, low)
	testenv.Eventually(t, 20*time.Second, "low bound", func() bool { return count(boundPods(t, e.cs)) == 1 }, fastPoll)
	w, err := e.cs.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=low"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	high := pendingPod("high", "1")
	high.Spec.PriorityClassName = "high"
	create(t, e.cs, high)
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev := <-w.ResultChan():
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.DisruptionTarget {
					if c.Status != corev1.ConditionTrue || c.Reason != corev1.PodReasonPreemptionByScheduler ||
						c.Message != "default-scheduler: preempting to accommodate a higher priority pod" {
						t.Fatalf("DisruptionTarget %+v", c)
					}
					return
				}
			}
		case <-deadline:
			t.Fatal("the victim never got the DisruptionTarget condition")
		}
	}
}

func ptrIntStr(v int) *intstr.IntOrString {
	x := intstr.FromInt32(int32(v))
	return &x
}

func gather(t *testing.T, reg *prometheus.Registry, name string) *dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf
		}
	}
	t.Fatalf("no metric %s", name)
	return nil
}

func counterValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	return gather(t, reg, name).GetMetric()[0].GetCounter().GetValue()
}

func histogramValue(t *testing.T, reg *prometheus.Registry, name string) (uint64, float64) {
	h := gather(t, reg, name).GetMetric()[0].GetHistogram()
	return h.GetSampleCount(), h.GetSampleSum()
}
