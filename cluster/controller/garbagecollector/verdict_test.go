package garbagecollector

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/utils/ptr"
)

func refs(uids ...string) []metav1.OwnerReference {
	out := make([]metav1.OwnerReference, len(uids))
	for i, u := range uids {
		out[i] = metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "o-" + u, UID: types.UID(u)}
	}
	return out
}

// blockingRefs are refs with blockOwnerDeletion set.
func blockingRefs(uids ...string) []metav1.OwnerReference {
	out := refs(uids...)
	for i := range out {
		out[i].BlockOwnerDeletion = ptr.To(true)
	}
	return out
}

func TestJudge(t *testing.T) {
	bg, fg := metav1.DeletePropagationBackground, metav1.DeletePropagationForeground
	for _, tc := range []struct {
		name    string
		refs    []metav1.OwnerReference
		states  []ownerState
		deps    dependentsState
		cut     []types.UID
		unblock []types.UID
		del     *metav1.DeletionPropagation
	}{
		{name: "no owners", refs: nil, states: nil},
		{name: "solid owner keeps it", refs: refs("a"), states: []ownerState{ownerSolid}},
		{name: "only owner gone: background", refs: refs("a"), states: []ownerState{ownerDangling}, del: &bg},
		{name: "every owner gone", refs: refs("a", "b"), states: []ownerState{ownerDangling, ownerDangling}, del: &bg},
		{name: "one gone, one solid: cut the gone", refs: refs("a", "b"), states: []ownerState{ownerDangling, ownerSolid}, cut: []types.UID{"a"}},
		{name: "waiting owner, nothing blocks on it: background", refs: refs("a"), states: []ownerState{ownerWaiting}, del: &bg},
		{name: "waiting owner, blocked on: foreground", refs: refs("a"), states: []ownerState{ownerWaiting}, deps: dependentsState{blocking: true}, del: &fg},
		{name: "waiting and gone: deleted", refs: refs("a", "b"), states: []ownerState{ownerWaiting, ownerDangling}, del: &bg},
		{name: "solid keeps it, waiting and gone cut", refs: refs("a", "b", "c"), states: []ownerState{ownerWaiting, ownerSolid, ownerDangling}, cut: []types.UID{"c", "a"}},
		{name: "solid keeps it even when blocked on", refs: refs("a", "b"), states: []ownerState{ownerSolid, ownerWaiting}, deps: dependentsState{blocking: true}, cut: []types.UID{"b"}},
		// The ring: an owner waits for this object, and a dependent that
		// blocks it waits too. The blocking references to waiting owners
		// are unblocked; dangling and non-blocking ones are left as they are.
		{name: "ring closes: unblock waiting owners, then foreground", refs: blockingRefs("a", "b"), states: []ownerState{ownerWaiting, ownerDangling},
			deps: dependentsState{blocking: true, waiting: true}, unblock: []types.UID{"a"}, del: &fg},
		{name: "ring closes, reference already unblocked: foreground only", refs: refs("a"), states: []ownerState{ownerWaiting},
			deps: dependentsState{blocking: true, waiting: true}, del: &fg},
		{name: "waiting dependent without a waiting owner: background", refs: blockingRefs("a"), states: []ownerState{ownerDangling},
			deps: dependentsState{blocking: true, waiting: true}, del: &bg},
		{name: "a solid owner outside the ring keeps the member", refs: blockingRefs("a", "b"), states: []ownerState{ownerWaiting, ownerSolid},
			deps: dependentsState{blocking: true, waiting: true}, cut: []types.UID{"a"}},
		{name: "several waiting owners all unblocked", refs: blockingRefs("a", "b"), states: []ownerState{ownerWaiting, ownerWaiting},
			deps: dependentsState{blocking: true, waiting: true}, unblock: []types.UID{"a", "b"}, del: &fg},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := judge(tc.refs, tc.states, tc.deps)
			if !reflect.DeepEqual(v.cut, tc.cut) {
				t.Errorf("cut = %v, want %v", v.cut, tc.cut)
			}
			if !reflect.DeepEqual(v.unblock, tc.unblock) {
				t.Errorf("unblock = %v, want %v", v.unblock, tc.unblock)
			}
			if (v.del == nil) != (tc.del == nil) || (v.del != nil && *v.del != *tc.del) {
				t.Errorf("del = %v, want %v", ptrString(v.del), ptrString(tc.del))
			}
		})
	}
}

func ptrString(p *metav1.DeletionPropagation) string {
	if p == nil {
		return "<none>"
	}
	return string(*p)
}

func TestStateOf(t *testing.T) {
	now := metav1.NewTime(time.Now())
	for _, tc := range []struct {
		name string
		meta metav1.ObjectMeta
		want ownerState
	}{
		{"live", metav1.ObjectMeta{}, ownerSolid},
		{"foreground", metav1.ObjectMeta{DeletionTimestamp: &now, Finalizers: []string{metav1.FinalizerDeleteDependents}}, ownerWaiting},
		{"orphaning", metav1.ObjectMeta{DeletionTimestamp: &now, Finalizers: []string{metav1.FinalizerOrphanDependents}}, ownerSolid},
		{"finalizer not yet acted on", metav1.ObjectMeta{Finalizers: []string{metav1.FinalizerDeleteDependents}}, ownerSolid},
	} {
		if got := stateOf(&corev1.ConfigMap{ObjectMeta: tc.meta}); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The cut patch must do what the apiserver's strategic merge will do with
// it: remove exactly the named references.
func TestCutOwnersPatch(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", OwnerReferences: refs("a", "b", "c")}}
	orig, _ := json.Marshal(pod)
	out, err := strategicpatch.StrategicMergePatch(orig, cutOwnersPatch([]types.UID{"a", "c", "zz"}), &corev1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.Pod
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if want := refs("b"); !reflect.DeepEqual(got.OwnerReferences, want) {
		t.Fatalf("owners after patch = %+v, want %+v", got.OwnerReferences, want)
	}
}

// The unblock patch must, through the apiserver's strategic merge, flip
// blockOwnerDeletion on exactly the named blocking references and leave
// every other field of every reference as it was.
func TestUnblockPatch(t *testing.T) {
	owners := blockingRefs("a", "b", "c")
	owners[2].BlockOwnerDeletion = nil
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ResourceVersion: "9", OwnerReferences: owners}}
	orig, _ := json.Marshal(pod)
	patch := unblockPatch("9", pod.OwnerReferences, []types.UID{"a", "c", "zz"})
	out, err := strategicpatch.StrategicMergePatch(orig, patch, &corev1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.Pod
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	want := blockingRefs("a", "b", "c")
	want[0].BlockOwnerDeletion = ptr.To(false)
	want[2].BlockOwnerDeletion = nil
	if !reflect.DeepEqual(got.OwnerReferences, want) {
		t.Fatalf("owners after patch = %+v, want %+v", got.OwnerReferences, want)
	}
	if got.ResourceVersion != "9" {
		t.Fatalf("resourceVersion = %q: the patch must carry the version judged", got.ResourceVersion)
	}
	// Nothing left to unblock: the patch names no reference and changes
	// nothing, so a verdict built from the patched object stops there.
	if v := judge(got.OwnerReferences[:1], []ownerState{ownerWaiting}, dependentsState{blocking: true, waiting: true}); len(v.unblock) != 0 {
		t.Fatalf("unblocked reference judged again: unblock %v", v.unblock)
	}
}

// A reference from an object to itself never blocks its deletion; any
// other blocking reference does.
func TestDependentBlocking(t *testing.T) {
	self := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "a"}}
	for _, tc := range []struct {
		name string
		obj  metav1.Object
		ref  metav1.OwnerReference
		want bool
	}{
		{"blocking", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "x"}}, blockingRefs("a")[0], true},
		{"not blocking", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "x"}}, refs("a")[0], false},
		{"itself", self, blockingRefs("a")[0], false},
	} {
		if got := (dependent{obj: tc.obj, ref: tc.ref}).blocking(); got != tc.want {
			t.Errorf("%s: blocking = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestFinalizersPatch(t *testing.T) {
	got := string(finalizersPatch("42", without([]string{"orphan", "example.com/x"}, "orphan")))
	if want := `{"metadata":{"finalizers":["example.com/x"],"resourceVersion":"42"}}`; got != want {
		t.Fatalf("patch = %s, want %s", got, want)
	}
	if got := string(finalizersPatch("7", without([]string{"orphan"}, "orphan"))); got != `{"metadata":{"finalizers":[],"resourceVersion":"7"}}` {
		t.Fatalf("last finalizer: %s", got)
	}
}

func TestFinalizerRemovable(t *testing.T) {
	if !finalizerRemovable(&corev1.Pod{}) {
		t.Error("pod: want removable")
	}
	ns := &corev1.Namespace{Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}}}
	if finalizerRemovable(ns) {
		t.Error("namespace not yet emptied: want kept")
	}
	ns.Spec.Finalizers = nil
	if !finalizerRemovable(ns) {
		t.Error("finalized namespace: want removable")
	}
}
