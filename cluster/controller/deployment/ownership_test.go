package deployment_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller/deployment"
	"github.com/kstep-dev/kstep/internal/testenv"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// An orphan ReplicaSet that matches a Deployment's selector and template
// is adopted and becomes its new ReplicaSet (no second one is created); a
// ReplicaSet relabelled out of the selector is released and replaced.
func TestAdoptAndRelease(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	dep := newDeployment("adopt", 3, rollingUpdate(1, 0))
	orphan := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "adopt-orphan", Namespace: ns, Labels: map[string]string{"app": "adopt", "pod-template-hash": "orphan"}},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "adopt", "pod-template-hash": "orphan"}},
			Template: *dep.Spec.Template.DeepCopy(),
		},
	}
	orphan.Spec.Template.Labels = map[string]string{"app": "adopt", "pod-template-hash": "orphan"}
	orphan, err := c.Client.AppsV1().ReplicaSets(ns).Create(ctx, orphan, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Client.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d = waitRolledOut(t, c.Client, "adopt", 30*time.Second)
	rss := replicaSets(t, c.Client, d)
	if len(rss) != 1 || rss["1"] == nil || rss["1"].UID != orphan.UID {
		t.Fatalf("after adoption: %s", describe(rss))
	}
	if ref := metav1.GetControllerOf(rss["1"]); ref == nil || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		t.Fatalf("adopted owner reference: %+v", rss["1"].OwnerReferences)
	}

	// Relabel it out of the selector: released, and a new ReplicaSet for
	// the template takes its place.
	if _, err := c.Client.AppsV1().ReplicaSets(ns).Patch(ctx, orphan.Name, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"app":"elsewhere"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "release and replacement", func() (bool, error) {
		rs, err := c.Client.AppsV1().ReplicaSets(ns).Get(ctx, orphan.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		now := replicaSets(t, c.Client, d)
		return metav1.GetControllerOf(rs) == nil && len(now) == 1 && now["1"] != nil && now["1"].UID != orphan.UID,
			fmt.Errorf("released rs owners %v; owned: %s", rs.OwnerReferences, describe(now))
	}, fastPoll)
	d = waitRolledOut(t, c.Client, "adopt", 30*time.Second)
	checkReplicaSetShape(t, d, replicaSets(t, c.Client, d)["1"])
}

// revisionHistoryLimit 1: after v1 -> v2 -> v3 only v2 (empty) and v3
// remain.
func TestRevisionHistoryLimit(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	dep := newDeployment("hist", 2, rollingUpdate(1, 0))
	dep.Spec.RevisionHistoryLimit = ptr.To[int32](1)
	if _, err := c.Client.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRolledOut(t, c.Client, "hist", 30*time.Second)
	for _, img := range []string{"registry.kstep.local/app:v2", "registry.kstep.local/app:v3"} {
		setImage(t, c.Client, "hist", img, nil)
		waitRolledOut(t, c.Client, "hist", 30*time.Second)
	}
	d := getDeployment(t, c.Client, "hist")
	testenv.Eventually(t, 20*time.Second, "revision 1 cleaned up", func() (bool, error) {
		rss := replicaSets(t, c.Client, d)
		return len(rss) == 2 && rss["2"] != nil && rss["3"] != nil, errors.New(describe(rss))
	}, fastPoll)
	l, err := c.Client.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=hist"})
	if err != nil || len(l.Items) != 2 {
		t.Fatalf("replicasets left: %d (%v)", len(l.Items), err)
	}
	if d.Annotations[deployment.RevisionAnnotation] != "3" {
		t.Errorf("revision %q", d.Annotations[deployment.RevisionAnnotation])
	}
}
