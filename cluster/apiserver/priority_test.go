package apiserver_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// wantStatus fails unless err is an API error with the given code whose
// message contains msg.
func wantStatus(t *testing.T, what string, err error, code int32, msg string) {
	t.Helper()
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Code != code || !strings.Contains(se.ErrStatus.Message, msg) {
		t.Errorf("%s: %v, want %d with %q", what, err, code, msg)
	}
}

func priorityClass(name string, value int32) *schedulingv1.PriorityClass {
	return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
}

// The system classes are there from the start and cannot be deleted or
// given another value; a user's class is validated as upstream's.
func TestPriorityClassValidation(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	pcs := e.cs.SchedulingV1().PriorityClasses()
	for name, value := range map[string]int32{"system-node-critical": 2000001000, "system-cluster-critical": 2000000000} {
		pc, err := pcs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("built-in %s: %v", name, err)
		}
		if pc.Value != value || pc.GlobalDefault || pc.PreemptionPolicy == nil || *pc.PreemptionPolicy != corev1.PreemptLowerPriority || pc.Generation != 1 {
			t.Errorf("built-in %s: value %d, globalDefault %v, preemptionPolicy %v, generation %d", name, pc.Value, pc.GlobalDefault, pc.PreemptionPolicy, pc.Generation)
		}
		err = pcs.Delete(ctx, name, metav1.DeleteOptions{})
		wantStatus(t, "delete "+name, err, 403, "this is a system priority class and cannot be deleted")
		pc.Value = 5
		_, err = pcs.Update(ctx, pc, metav1.UpdateOptions{})
		wantStatus(t, "update "+name+"'s value", err, 422, "value: Forbidden: may not be changed in an update.")
	}

	_, err := pcs.Create(ctx, priorityClass("too-high", 1000000001), metav1.CreateOptions{})
	wantStatus(t, "a user value above 1e9", err, 422, "maximum allowed value of a user defined priority is 1000000000")
	_, err = pcs.Create(ctx, priorityClass("system-mine", 10), metav1.CreateOptions{})
	wantStatus(t, "a system- name", err, 422, "priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class")
	bad := priorityClass("bad-policy", 10)
	bad.PreemptionPolicy = ptr.To(corev1.PreemptionPolicy("Sometimes"))
	_, err = pcs.Create(ctx, bad, metav1.CreateOptions{})
	wantStatus(t, "an unknown preemption policy", err, 422, `preemptionPolicy: Unsupported value: "Sometimes"`)

	top, err := pcs.Create(ctx, priorityClass("top", 1000000000), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a user class at 1e9: %v", err)
	}
	if top.PreemptionPolicy == nil || *top.PreemptionPolicy != corev1.PreemptLowerPriority {
		t.Errorf("preemptionPolicy defaulted to %v, want PreemptLowerPriority", top.PreemptionPolicy)
	}
	top.PreemptionPolicy = ptr.To(corev1.PreemptNever)
	_, err = pcs.Update(ctx, top, metav1.UpdateOptions{})
	wantStatus(t, "a preemptionPolicy change", err, 422, "preemptionPolicy: Invalid value: \"Never\": field is immutable")
	if err := pcs.Delete(ctx, "top", metav1.DeleteOptions{}); err != nil {
		t.Errorf("delete a user class: %v", err)
	}
}

// One global default only: a second is refused at create and at update.
func TestPriorityClassGlobalDefault(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	pcs := e.cs.SchedulingV1().PriorityClasses()
	d := priorityClass("dflt", 100)
	d.GlobalDefault = true
	if _, err := pcs.Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	d2 := priorityClass("dflt2", 200)
	d2.GlobalDefault = true
	_, err := pcs.Create(ctx, d2, metav1.CreateOptions{})
	wantStatus(t, "a second global default", err, 403, "PriorityClass dflt is already marked as default. Only one default can exist")
	if _, err := pcs.Create(ctx, priorityClass("other", 200), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = pcs.Patch(ctx, "other", types.MergePatchType, []byte(`{"globalDefault":true}`), metav1.PatchOptions{})
	wantStatus(t, "marking a second class default", err, 403, "PriorityClass dflt is already marked as default. Only one default can exist")
	// The default itself may be updated.
	if _, err := pcs.Patch(ctx, "dflt", types.MergePatchType, []byte(`{"description":"the default"}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("update the default: %v", err)
	}
	// Once it is no longer the default, another may be.
	if _, err := pcs.Patch(ctx, "dflt", types.MergePatchType, []byte(`{"globalDefault":false}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	testWaitDefault(t, e, "")
	if _, err := pcs.Patch(ctx, "other", types.MergePatchType, []byte(`{"globalDefault":true}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("a new default once the old one is unmarked: %v", err)
	}
}

// testWaitDefault waits until a pod without a class gets the named global
// default (or none): the plugin reads the watch cache.
func testWaitDefault(t *testing.T, e *env, want string) {
	t.Helper()
	ctx := ctxT(t)
	for i := 0; ; i++ {
		p := testPod("probe")
		p.Namespace = "default"
		got, err := e.cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.PriorityClassName == want {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("default class %q, want %q", got.Spec.PriorityClassName, want)
		}
		sleepBriefly(ctx)
	}
}

// Upstream's Priority admission on pod creates and updates.
func TestPriorityAdmission(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	pods := e.cs.CoreV1().Pods("default")
	create := func(name string, mutate func(*corev1.Pod)) (*corev1.Pod, error) {
		p := testPod(name)
		mutate(p)
		return pods.Create(ctx, p, metav1.CreateOptions{})
	}
	check := func(p *corev1.Pod, class string, prio int32, policy corev1.PreemptionPolicy) {
		t.Helper()
		if p.Spec.PriorityClassName != class || p.Spec.Priority == nil || *p.Spec.Priority != prio ||
			p.Spec.PreemptionPolicy == nil || *p.Spec.PreemptionPolicy != policy {
			t.Errorf("pod %s: class %q priority %v policy %v, want %q %d %s", p.Name, p.Spec.PriorityClassName, p.Spec.Priority, p.Spec.PreemptionPolicy, class, prio, policy)
		}
	}

	// No class and no default: 0, PreemptLowerPriority.
	p, err := create("plain", func(*corev1.Pod) {})
	if err != nil {
		t.Fatal(err)
	}
	check(p, "", 0, corev1.PreemptLowerPriority)

	_, err = create("unknown", func(p *corev1.Pod) { p.Spec.PriorityClassName = "nope" })
	wantStatus(t, "an unknown class", err, 403, `pods "unknown" is forbidden: no PriorityClass with name nope was found`)
	_, err = create("handset", func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](1000) })
	wantStatus(t, "a hand-set priority", err, 403,
		`pods "handset" is forbidden: the integer value of priority (1000) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name`)
	// A hand-set priority that agrees is accepted, as upstream.
	if _, err := create("agrees", func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](0) }); err != nil {
		t.Errorf("a hand-set priority that agrees: %v", err)
	}

	// A class created a moment ago resolves at once (the plugin catches
	// its cache up on a miss).
	high := priorityClass("high", 1000)
	high.PreemptionPolicy = ptr.To(corev1.PreemptNever)
	if _, err := e.cs.SchedulingV1().PriorityClasses().Create(ctx, high, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err = create("high", func(p *corev1.Pod) { p.Spec.PriorityClassName = "high" })
	if err != nil {
		t.Fatal(err)
	}
	check(p, "high", 1000, corev1.PreemptNever)
	_, err = create("high-policy", func(p *corev1.Pod) {
		p.Spec.PriorityClassName = "high"
		p.Spec.PreemptionPolicy = ptr.To(corev1.PreemptLowerPriority)
	})
	wantStatus(t, "a hand-set preemption policy", err, 403,
		`the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name`)
	p, err = create("critical", func(p *corev1.Pod) { p.Spec.PriorityClassName = "system-node-critical" })
	if err != nil {
		t.Fatal(err)
	}
	check(p, "system-node-critical", 2000001000, corev1.PreemptLowerPriority)

	// Updates: a PUT without priority keeps it; a change is refused.
	cur, err := pods.Get(ctx, "high", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.Priority, cur.Spec.PreemptionPolicy = nil, nil
	cur.Labels["x"] = "y"
	if cur, err = pods.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update without priority: %v", err)
	}
	check(cur, "high", 1000, corev1.PreemptNever)
	cur.Spec.Priority = ptr.To[int32](5)
	_, err = pods.Update(ctx, cur, metav1.UpdateOptions{})
	wantStatus(t, "a priority change", err, 422, "pod updates may not change fields other than")
	_, err = pods.Patch(ctx, "high", types.MergePatchType, []byte(`{"spec":{"priority":7}}`), metav1.PatchOptions{})
	wantStatus(t, "a priority patch", err, 422, "pod updates may not change fields other than")

	// A global default applies to pods without a class, named in them.
	d := priorityClass("dflt", 100)
	d.GlobalDefault = true
	if _, err := e.cs.SchedulingV1().PriorityClasses().Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testWaitDefault(t, e, "dflt")
	p, err = create("defaulted", func(*corev1.Pod) {})
	if err != nil {
		t.Fatal(err)
	}
	check(p, "dflt", 100, corev1.PreemptLowerPriority)
	_, err = create("handset2", func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](1000) })
	wantStatus(t, "a hand-set priority against the default", err, 403,
		"the integer value of priority (1000) must not be provided in pod spec; priority admission controller computed 100 from the given PriorityClass name")
}

// Several apiservers on one etcd create the system classes once: the
// second leaves the first's objects as they are.
func TestSystemPriorityClassesIdempotent(t *testing.T) {
	url, _ := testenv.Etcd(t)
	first := testenv.StartAPIServer(t, url, nil)
	second := testenv.StartAPIServer(t, url, nil)
	uids := map[string]types.UID{}
	for i, a := range []*testenv.APIServer{first, second} {
		cs, err := kubernetes.NewForConfig(a.Config)
		if err != nil {
			t.Fatal(err)
		}
		list, err := cs.SchedulingV1().PriorityClasses().List(ctxT(t), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 2 {
			t.Fatalf("apiserver %d lists %d classes, want the 2 system ones", i, len(list.Items))
		}
		for _, pc := range list.Items {
			if i == 0 {
				uids[pc.Name] = pc.UID
			} else if uids[pc.Name] != pc.UID {
				t.Errorf("%s: uid %s on the second apiserver, %s on the first", pc.Name, pc.UID, uids[pc.Name])
			}
		}
	}
}

func sleepBriefly(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(20 * time.Millisecond):
	}
}
