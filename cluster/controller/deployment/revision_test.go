package deployment

import (
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestSetNewReplicaSetAnnotations(t *testing.T) {
	d := rolling(10, 2, 1)
	d.Annotations = map[string]string{
		"kubernetes.io/change-cause":       "kubectl set image app=v2",
		RevisionAnnotation:                 "7",
		corev1.LastAppliedConfigAnnotation: "{}",
	}
	// A ReplicaSet being created: revision, replica annotations, d's
	// annotations but the skipped ones.
	r := &appsv1.ReplicaSet{}
	if !setNewReplicaSetAnnotations(d, r, "3", false) {
		t.Fatal("no change reported")
	}
	want := map[string]string{"kubernetes.io/change-cause": "kubectl set image app=v2", RevisionAnnotation: "3",
		DesiredReplicasAnnotation: "10", MaxReplicasAnnotation: "12"}
	if len(r.Annotations) != len(want) {
		t.Fatalf("annotations %v, want %v", r.Annotations, want)
	}
	for k, v := range want {
		if r.Annotations[k] != v {
			t.Errorf("%s = %q, want %q", k, r.Annotations[k], v)
		}
	}
	if setNewReplicaSetAnnotations(d, r, "3", true) {
		t.Error("an up-to-date ReplicaSet changed")
	}
	if setNewReplicaSetAnnotations(d, r, "2", true) || r.Annotations[RevisionAnnotation] != "3" {
		t.Error("a revision was lowered")
	}

	// Rollback: the ReplicaSet of revision 1 becomes new again as 3; its
	// history keeps 1, then 3 when it comes back as 5.
	v1 := withRevision(&appsv1.ReplicaSet{}, 1)
	setNewReplicaSetAnnotations(d, v1, "3", true)
	if v1.Annotations[RevisionAnnotation] != "3" || v1.Annotations[RevisionHistoryAnnotation] != "1" {
		t.Fatalf("after rollback: %v", v1.Annotations)
	}
	setNewReplicaSetAnnotations(d, v1, "5", true)
	if v1.Annotations[RevisionHistoryAnnotation] != "1,3" {
		t.Fatalf("history %q", v1.Annotations[RevisionHistoryAnnotation])
	}
	if _, ok := v1.Annotations[DesiredReplicasAnnotation]; ok {
		t.Error("an existing ReplicaSet got replica annotations here (they belong to scaling)")
	}
}

func TestRevisionHistoryBounded(t *testing.T) {
	r := withRevision(&appsv1.ReplicaSet{}, 1)
	for i := 2; i < 1000; i++ {
		setNewReplicaSetAnnotations(rolling(1, 1, 0), r, strconv.Itoa(i), true)
	}
	if n := len(r.Annotations[RevisionHistoryAnnotation]); n > maxRevisionHistoryChars {
		t.Errorf("history is %d chars", n)
	}
}

func TestMaxRevision(t *testing.T) {
	bad := &appsv1.ReplicaSet{}
	bad.Annotations = map[string]string{RevisionAnnotation: "x"}
	rss := []*appsv1.ReplicaSet{withRevision(rs("a", 0, 0, 0), 4), bad, withRevision(rs("b", 0, 0, 0), 11), rs("c", 0, 0, 0)}
	if got := maxRevision(rss); got != 11 {
		t.Errorf("maxRevision = %d", got)
	}
	if maxRevision(nil) != 0 {
		t.Error("no ReplicaSets, revision not 0")
	}
}

func TestComputeHash(t *testing.T) {
	d := rolling(1, 1, 0)
	h := ComputeHash(&d.Spec.Template, nil)
	if h != ComputeHash(d.Spec.Template.DeepCopy(), nil) {
		t.Fatal("hash not deterministic")
	}
	if errs := validation.IsDNS1123Label(h); len(errs) > 0 || strings.ContainsAny(h, "aeiou013") {
		t.Errorf("hash %q is not a safe label value: %v", h, errs)
	}
	if h == ComputeHash(&d.Spec.Template, ptrInt32(1)) {
		t.Error("collisionCount does not change the hash")
	}
	if ComputeHash(&d.Spec.Template, ptrInt32(0)) == ComputeHash(&d.Spec.Template, ptrInt32(1)) {
		t.Error("collision counts 0 and 1 hash the same")
	}
	v2 := d.Spec.Template.DeepCopy()
	v2.Spec.Containers[0].Image = "registry.kstep.local/app:v2"
	if h == ComputeHash(v2, nil) {
		t.Error("a new image does not change the hash")
	}
	// The hash of an upstream-shaped template is upstream's: pinned so an
	// accidental change of the input (say, hashing JSON) shows.
	if got := ComputeHash(&d.Spec.Template, nil); got != pinnedHash {
		t.Errorf("hash %q, pinned %q", got, pinnedHash)
	}
}

const pinnedHash = "54d5fc7747"

func TestNewReplicaSetFor(t *testing.T) {
	d := rolling(3, 1, 0)
	r := newReplicaSetFor(d)
	h := ComputeHash(&d.Spec.Template, nil)
	if r.Name != "web-"+h || r.Labels[UniqueLabelKey] != h || r.Spec.Template.Labels[UniqueLabelKey] != h ||
		r.Spec.Selector.MatchLabels[UniqueLabelKey] != h || r.Spec.Selector.MatchLabels["app"] != "web" {
		t.Fatalf("replicaset %s labels %v selector %v", r.Name, r.Spec.Template.Labels, r.Spec.Selector)
	}
	if _, ok := d.Spec.Template.Labels[UniqueLabelKey]; ok {
		t.Fatal("the Deployment's own template got the hash label")
	}
	if _, ok := d.Spec.Selector.MatchLabels[UniqueLabelKey]; ok {
		t.Fatal("the Deployment's own selector got the hash label")
	}
	ref := r.OwnerReferences[0]
	if ref.Kind != "Deployment" || ref.Name != "web" || ref.UID != d.UID || !*ref.Controller || !*ref.BlockOwnerDeletion {
		t.Fatalf("owner %+v", ref)
	}
	if !equalIgnoreHash(&r.Spec.Template, &d.Spec.Template) {
		t.Fatal("the new ReplicaSet's template is not the Deployment's")
	}
	if findNewReplicaSet(d, []*appsv1.ReplicaSet{r}) != r {
		t.Fatal("not found as the new ReplicaSet")
	}
}
