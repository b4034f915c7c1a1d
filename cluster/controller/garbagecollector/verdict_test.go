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
)

func refs(uids ...string) []metav1.OwnerReference {
	out := make([]metav1.OwnerReference, len(uids))
	for i, u := range uids {
		out[i] = metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "o-" + u, UID: types.UID(u)}
	}
	return out
}

func TestJudge(t *testing.T) {
	bg, fg := metav1.DeletePropagationBackground, metav1.DeletePropagationForeground
	for _, tc := range []struct {
		name     string
		refs     []metav1.OwnerReference
		states   []ownerState
		blocking bool
		cut      []types.UID
		del      *metav1.DeletionPropagation
	}{
		{name: "no owners", refs: nil, states: nil},
		{name: "solid owner keeps it", refs: refs("a"), states: []ownerState{ownerSolid}},
		{name: "only owner gone: background", refs: refs("a"), states: []ownerState{ownerDangling}, del: &bg},
		{name: "every owner gone", refs: refs("a", "b"), states: []ownerState{ownerDangling, ownerDangling}, del: &bg},
		{name: "one gone, one solid: cut the gone", refs: refs("a", "b"), states: []ownerState{ownerDangling, ownerSolid}, cut: []types.UID{"a"}},
		{name: "waiting owner, nothing blocks on it: background", refs: refs("a"), states: []ownerState{ownerWaiting}, del: &bg},
		{name: "waiting owner, blocked on: foreground", refs: refs("a"), states: []ownerState{ownerWaiting}, blocking: true, del: &fg},
		{name: "waiting and gone: deleted", refs: refs("a", "b"), states: []ownerState{ownerWaiting, ownerDangling}, del: &bg},
		{name: "solid keeps it, waiting and gone cut", refs: refs("a", "b", "c"), states: []ownerState{ownerWaiting, ownerSolid, ownerDangling}, cut: []types.UID{"c", "a"}},
		{name: "solid keeps it even when blocked on", refs: refs("a", "b"), states: []ownerState{ownerSolid, ownerWaiting}, blocking: true, cut: []types.UID{"b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := judge(tc.refs, tc.states, tc.blocking)
			if !reflect.DeepEqual(v.cut, tc.cut) {
				t.Errorf("cut = %v, want %v", v.cut, tc.cut)
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
