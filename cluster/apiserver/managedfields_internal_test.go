package apiserver

import (
	"fmt"
	"maps"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"

	"github.com/kstep-dev/kstep/cluster/apiserver/defaults"
	"github.com/kstep-dev/kstep/cluster/apiserver/openapi"
)

// fieldManagersByResource is the served resources' field managers, and the
// resources by name.
func fieldManagersByResource() (fieldManagers, map[string]*resource) {
	rs := resources()
	res := map[string]*resource{}
	for _, r := range rs {
		res[r.gvr.Resource] = r
	}
	return newFieldManagers(rs), res
}

// BenchmarkManagedFields is what recording managed fields adds to a write,
// the field manager alone, as trackUpdate calls it: a pod's create, a
// kubelet's status update of it, a node's Lease renewal (kstep's most
// frequent writes).
func BenchmarkManagedFields(b *testing.B) {
	f, res := fieldManagersByResource()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.kstep.local/app:v1",
			Ports: []corev1.ContainerPort{{ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}}}}
	defaults.Apply(pod) // as stored: the write chain defaults it before the field manager
	created := f.get(res["pods"], "").UpdateNoErrors(&corev1.Pod{}, pod.DeepCopy(), "kstep-load").(*corev1.Pod)
	running := created.DeepCopy()
	now := metav1.Now()
	running.Spec.NodeName = "hollow-0"
	running.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.0.2", StartTime: &now, Conditions: []corev1.PodCondition{
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "hollow-0", Namespace: "kube-node-lease"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("hollow-0"), LeaseDurationSeconds: ptr.To[int32](40)}}
	lease = f.get(res["leases"], "").UpdateNoErrors(&coordinationv1.Lease{}, lease, "kstep").(*coordinationv1.Lease)

	for _, bc := range []struct {
		name      string
		r         *resource
		sub       string
		live, obj func(i int) runtime.Object
	}{
		{"pod-create", res["pods"], "", func(int) runtime.Object { return &corev1.Pod{} }, func(int) runtime.Object { return pod.DeepCopy() }},
		{"pod-status", res["pods"], "status", func(int) runtime.Object { return created.DeepCopy() }, func(int) runtime.Object { return running.DeepCopy() }},
		{"lease-renew", res["leases"], "", func(int) runtime.Object { return lease.DeepCopy() }, func(i int) runtime.Object {
			l := lease.DeepCopy()
			l.Spec.RenewTime = &metav1.MicroTime{Time: time.Unix(int64(i), 0)}
			return l
		}},
	} {
		fm := f.get(bc.r, bc.sub)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				live, obj := bc.live(i), bc.obj(i)
				if out := updateManagedFields(fm, live, obj, "bench", resetFields(bc.r, bc.sub)); out == nil {
					b.Fatal("no object")
				}
			}
		})
	}
}

// The field managers' type converter skips structured-merge-diff's
// validation of what an update compares (updateTypeConverter): the managed
// fields it records must be exactly those of client-go's validating
// converter, for the kinds kstep writes most and for an object the
// validation would refuse (a container without its list-map key, name),
// which both must refuse alike: the write keeps the live managed fields.
func TestUnvalidatedUpdatesRecordTheSameFields(t *testing.T) {
	gvk := corev1.SchemeGroupVersion.WithKind("Pod")
	validating, err := managedfields.NewDefaultFieldManager(openapi.TypeConverter(), scheme.Scheme, scheme.Scheme, scheme.Scheme, gvk, gvk.GroupVersion(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	unvalidated, err := managedfields.NewDefaultFieldManager(updateTypeConverter(), fieldManagerConverter, scheme.Scheme, scheme.Scheme, gvk, gvk.GroupVersion(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.kstep.local/app:v1",
			Ports: []corev1.ContainerPort{{ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}}}}
	bound := pod.DeepCopy()
	bound.Spec.NodeName = "hollow-0"
	bound.Labels["tier"] = "front"
	bound.Spec.Containers = append(bound.Spec.Containers, corev1.Container{Name: "sidecar", Image: "registry.kstep.local/app:v1"})
	dup := bound.DeepCopy()
	dup.Spec.Containers = append(dup.Spec.Containers, dup.Spec.Containers[1]) // a duplicate key: allowed on update
	nameless := bound.DeepCopy()
	nameless.Spec.Containers = append(nameless.Spec.Containers, corev1.Container{Image: "x"})
	for _, tc := range []struct {
		name      string
		live, obj *corev1.Pod
		manager   string
	}{
		{"create", &corev1.Pod{}, pod, "creator"},
		{"update by another manager", pod, bound, "binder"},
		{"duplicate list-map key", bound, dup, "dup"},
		{"missing list-map key", bound, nameless, "nameless"},
	} {
		for _, round := range []int{1, 2} { // the second finds the kind learnt
			live := tc.live.DeepCopy()
			if tc.name != "create" {
				live = validating.UpdateNoErrors(&corev1.Pod{}, tc.live.DeepCopy(), "creator").(*corev1.Pod)
			}
			want := validating.UpdateNoErrors(live.DeepCopy(), tc.obj.DeepCopy(), tc.manager).(*corev1.Pod)
			shared := live.DeepCopy() // the watch cache's copy, which readers share
			got := unvalidated.UpdateNoErrors(shared, tc.obj.DeepCopy(), tc.manager).(*corev1.Pod)
			if !equality.Semantic.DeepEqual(shared, live) { // kind included
				t.Errorf("%s (round %d): the field manager wrote to the live object", tc.name, round)
			}
			if !equality.Semantic.DeepEqual(stripTimes(want.ManagedFields), stripTimes(got.ManagedFields)) {
				t.Errorf("%s (round %d): managed fields\n got %+v\nwant %+v", tc.name, round, got.ManagedFields, want.ManagedFields)
			}
		}
	}
}

func stripTimes(mf []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	out := make([]metav1.ManagedFieldsEntry, len(mf))
	for i, e := range mf {
		e.Time = nil
		out[i] = e
	}
	return out
}

// updateManagedFields leaves the fields a write never owns out of the
// comparison (a status write's spec, a main write's status): the managed
// fields it records must be exactly the field manager's on the whole
// objects, for writes that change those fields, the fields they own, the
// metadata, or all at once, and by a new manager or the one that owns the
// most; neither object may be changed but for obj's managed fields.
func TestUpdateManagedFieldsWithoutResetFieldsRecordsTheSame(t *testing.T) {
	f, res := fieldManagersByResource()
	now := metav1.Now()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u1", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.kstep.local/app:v1",
			Ports: []corev1.ContainerPort{{ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}}}}
	defaults.Apply(pod)
	pod = f.get(res["pods"], "").UpdateNoErrors(&corev1.Pod{}, pod, "creator").(*corev1.Pod)
	pending := pod.DeepCopy()
	pending.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}}
	pending = f.get(res["pods"], "status").UpdateNoErrors(pod, pending, "scheduler").(*corev1.Pod)

	running := pending.DeepCopy()
	running.Status.Phase, running.Status.PodIP, running.Status.StartTime = corev1.PodRunning, "10.244.0.2", &now
	running.Status.Conditions = append(running.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now})
	specChanged := running.DeepCopy()
	specChanged.Spec.NodeName = "hollow-0"
	specChanged.Spec.Containers[0].Image = "registry.kstep.local/app:v2"
	relabelled := specChanged.DeepCopy()
	relabelled.Labels = map[string]string{"app": "web", "tier": "front"}
	statusGone := relabelled.DeepCopy()
	statusGone.Status = corev1.PodStatus{}

	rsLive := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "default", UID: "u2"},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: pod.Spec}}}
	rsLive = f.get(res["replicasets"], "").UpdateNoErrors(&appsv1.ReplicaSet{}, rsLive, "kstep-load").(*appsv1.ReplicaSet)
	rsReady := rsLive.DeepCopy()
	rsReady.Status = appsv1.ReplicaSetStatus{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, ObservedGeneration: 1}
	rsScaled := rsReady.DeepCopy()
	rsScaled.Spec.Replicas = ptr.To[int32](3)

	for _, tc := range []struct {
		name      string
		r         *resource
		sub       string
		live, obj runtime.Object
	}{
		{"pod create", res["pods"], "", &corev1.Pod{}, pod},
		{"pod create with a status", res["pods"], "", &corev1.Pod{}, running},
		{"pod status", res["pods"], "status", pending, running},
		{"pod status that changes the spec", res["pods"], "status", pending, specChanged},
		{"pod status that changes the labels", res["pods"], "status", pending, relabelled},
		{"pod update that changes the status", res["pods"], "", pending, relabelled},
		{"pod update that drops the status", res["pods"], "", running, statusGone},
		{"replicaset status", res["replicasets"], "status", rsLive, rsReady},
		{"replicaset scaled through the main resource", res["replicasets"], "", rsReady, rsScaled},
	} {
		fm := f.get(tc.r, tc.sub)
		for _, manager := range []string{"creator", "kubelet"} {
			want := fm.UpdateNoErrors(tc.live.DeepCopyObject(), tc.obj.DeepCopyObject(), manager)
			live, obj := tc.live.DeepCopyObject(), tc.obj.DeepCopyObject()
			got := updateManagedFields(fm, live, obj, manager, resetFields(tc.r, tc.sub))
			if got != obj {
				t.Fatalf("%s: the result is not obj", tc.name)
			}
			if !equality.Semantic.DeepEqual(live, tc.live) {
				t.Errorf("%s: live changed", tc.name)
			}
			gotMeta, wantMeta := objectMeta(got), objectMeta(want)
			if !equality.Semantic.DeepEqual(stripTimes(gotMeta.ManagedFields), stripTimes(wantMeta.ManagedFields)) {
				t.Errorf("%s (%s): managed fields\n got %+v\nwant %+v", tc.name, manager, gotMeta.ManagedFields, wantMeta.ManagedFields)
			}
			objectMeta(obj).ManagedFields, objectMeta(want).ManagedFields = nil, nil
			if !equality.Semantic.DeepEqual(obj, want) {
				t.Errorf("%s (%s): the object changed beyond its managed fields", tc.name, manager)
			}
		}
	}
}

// wideConfigMap is a ConfigMap of n empty keys, as a hostile client sends it.
func wideConfigMap(n int) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "wide", Namespace: "default"}, Data: make(map[string]string, n)}
	for i := range n {
		cm.Data[fmt.Sprintf("k%06d", i)] = ""
	}
	return cm
}

// BenchmarkManagedFieldsWideConfigMap is the field manager's cost of a
// write of a ConfigMap of 20k to 110k keys: its create, and an update that
// changes one key. The cost must grow as n log n, not n².
func BenchmarkManagedFieldsWideConfigMap(b *testing.B) {
	f, res := fieldManagersByResource()
	fm := f.get(res["configmaps"], "")
	for _, n := range []int{20000, 50000, 80000, 110000} {
		cm := wideConfigMap(n)
		b.Run(fmt.Sprintf("%dk/create", n/1000), func(b *testing.B) {
			defer reportCPU(b)()
			for b.Loop() {
				out := updateManagedFields(fm, &corev1.ConfigMap{}, cm.DeepCopy(), "bench", nil).(*corev1.ConfigMap)
				if len(out.ManagedFields) != 1 {
					b.Fatalf("managed fields %v", out.ManagedFields)
				}
			}
		})
		live := updateManagedFields(fm, &corev1.ConfigMap{}, cm.DeepCopy(), "bench", nil).(*corev1.ConfigMap)
		b.Run(fmt.Sprintf("%dk/update", n/1000), func(b *testing.B) {
			defer reportCPU(b)()
			for b.Loop() {
				obj := live.DeepCopy()
				obj.Data["k000000"] = "x"
				out := updateManagedFields(fm, live, obj, "other", nil).(*corev1.ConfigMap)
				if len(out.ManagedFields) != 2 {
					b.Fatalf("managed fields %v", len(out.ManagedFields))
				}
			}
		})
	}
}

// reportCPU reports the process's CPU time (user and system, the garbage
// collector's included) per op as cpu-ns/op, the figure that matters on a
// shared machine where ns/op (wall time) waits for a core: call it before
// the loop, and the function it returns after.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") }
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Maps of more than sortedMapMin entries are compared in key order
// (sortedValue; a map of strings by zipStrings): the managed fields
// recorded, and what an apply makes, must be exactly client-go's
// validating converter's, for maps of strings (a ConfigMap's data, a
// pod's labels), of bytes (a Secret's data) and of structs, when keys are
// added, changed and removed, by one manager or several.
func TestWideMapsRecordTheSameFields(t *testing.T) {
	fms := func(gvk schema.GroupVersionKind) (validating, unvalidated *managedfields.FieldManager) {
		v, err := managedfields.NewDefaultFieldManager(openapi.TypeConverter(), scheme.Scheme, scheme.Scheme, scheme.Scheme, gvk, gvk.GroupVersion(), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		u, err := managedfields.NewDefaultFieldManager(updateTypeConverter(), fieldManagerConverter, scheme.Scheme, scheme.Scheme, gvk, gvk.GroupVersion(), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		return v, u
	}
	keys := func(n, from int, val string) map[string]string {
		m := map[string]string{}
		for i := from; i < from+n; i++ {
			m[fmt.Sprintf("k%04d", i)] = val
		}
		return m
	}
	bytesOf := func(m map[string]string) map[string][]byte {
		out := map[string][]byte{}
		for k, v := range m {
			out[k] = []byte(v)
		}
		return out
	}
	meta := metav1.ObjectMeta{Name: "w", Namespace: "default", UID: "u1"}
	cm := func(data map[string]string) runtime.Object {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta, Data: data}
	}
	secret := func(data map[string]string) runtime.Object {
		return &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: meta, Data: bytesOf(data)}
	}
	pod := func(labels map[string]string) runtime.Object {
		m := meta
		m.Labels, m.Annotations = labels, labels
		return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: m,
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	}
	limits := func(data map[string]string) runtime.Object { // a map of structs, never a map of strings
		r := &corev1.ResourceQuota{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"}, ObjectMeta: meta,
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{}}}
		for k, v := range data {
			r.Spec.Hard[corev1.ResourceName("example.com/"+k)] = *apiresource.NewQuantity(int64(v[0]), apiresource.DecimalSI)
		}
		return r
	}
	for _, kind := range []struct {
		name string
		obj  func(map[string]string) runtime.Object
	}{{"ConfigMap", cm}, {"Secret", secret}, {"Pod", pod}, {"ResourceQuota", limits}} {
		validating, unvalidated := fms(kind.obj(nil).GetObjectKind().GroupVersionKind())
		// Each step is one write of the next object by its manager.
		steps := []struct {
			manager string
			data    map[string]string
		}{
			{"creator", keys(100, 0, "a")},
			{"creator", keys(100, 0, "a")},                                // no change
			{"other", keys(150, 0, "a")},                                  // 50 keys added
			{"other", mergeMaps(keys(50, 0, "b"), keys(100, 50, "a"))},    // 50 changed
			{"third", keys(70, 40, "a")},                                  // removed on both sides, changed back
			{"creator", mergeMaps(keys(10, 0, "c"), keys(100, 200, "d"))}, // nearly all new
			{"creator", keys(3, 0, "c")},                                  // a small map again
		}
		vLive, uLive := kind.obj(nil).DeepCopyObject(), kind.obj(nil).DeepCopyObject()
		objectMeta(vLive).UID, objectMeta(uLive).UID = "", ""
		for i, s := range steps {
			want := validating.UpdateNoErrors(vLive, kind.obj(s.data), s.manager)
			got := unvalidated.UpdateNoErrors(uLive, kind.obj(s.data), s.manager)
			if !equality.Semantic.DeepEqual(stripTimes(objectMeta(got).ManagedFields), stripTimes(objectMeta(want).ManagedFields)) {
				t.Fatalf("%s step %d (%s): managed fields\n got %+v\nwant %+v", kind.name, i, s.manager, objectMeta(got).ManagedFields, objectMeta(want).ManagedFields)
			}
			vLive, uLive = want, got
		}
		// An apply of a wide map over the last, whose first keys are
		// another manager's: its conflicts, and forced, what it makes,
		// are the same.
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(kind.obj(keys(120, 0, "e")))
		if err != nil {
			t.Fatal(err)
		}
		delete(u["metadata"].(map[string]any), "creationTimestamp")
		patch := &unstructured.Unstructured{Object: u}
		for _, force := range []bool{false, true} {
			want, wantErr := validating.Apply(vLive.DeepCopyObject(), patch.DeepCopy(), "applier", force)
			got, gotErr := unvalidated.Apply(uLive.DeepCopyObject(), patch.DeepCopy(), "applier", force)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || (wantErr == nil) != force {
				t.Fatalf("%s apply (force %v): %v, want %v", kind.name, force, gotErr, wantErr)
			}
			if wantErr != nil {
				continue
			}
			if !equality.Semantic.DeepEqual(stripTimes(objectMeta(got).ManagedFields), stripTimes(objectMeta(want).ManagedFields)) {
				t.Fatalf("%s apply (force %v): managed fields\n got %+v\nwant %+v", kind.name, force, objectMeta(got).ManagedFields, objectMeta(want).ManagedFields)
			}
			objectMeta(got).ManagedFields, objectMeta(want).ManagedFields = nil, nil
			if !equality.Semantic.DeepEqual(got, want) {
				t.Fatalf("%s apply (force %v): the objects differ\n got %+v\nwant %+v", kind.name, force, got, want)
			}
		}
	}
}

func mergeMaps(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}
