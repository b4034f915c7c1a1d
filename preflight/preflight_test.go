package preflight

import (
	"context"
	"errors"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kstep-dev/kstep/loadgen"
)

// Needs follows the job: Deployments or ReplicaSets, patch only when the
// job scales, Services and Endpoints only when it makes Services, in each
// of its namespaces, and the cluster-scoped namespace writes.
func TestNeeds(t *testing.T) {
	job := loadgen.Job{Namespaces: []string{"n0", "n1"}, Object: loadgen.ObjectTemplate{Kind: loadgen.KindDeployment, Service: true}, Phases: loadgen.Phases{ScaleTo: 3}}
	got := map[string]bool{}
	for _, a := range Needs(&job) {
		got[a.String()] = true
	}
	for _, w := range []string{"create namespaces", "delete namespaces", "list nodes", "create deployments.apps in namespace n1",
		"patch deployments.apps in namespace n0", "watch pods in namespace n1", "create services in namespace n0", "watch endpoints in namespace n1",
		// The cleanup's lists, in every namespace.
		"list deployments.apps", "list replicasets.apps", "list services", "list pods"} {
		if !got[w] {
			t.Errorf("needs lacks %q: %v", w, got)
		}
	}
	job = loadgen.Job{Namespaces: []string{"n0"}, Object: loadgen.ObjectTemplate{Kind: loadgen.KindReplicaSet}}
	for _, a := range Needs(&job) {
		if a.Namespace != "" && (a.Resource == "deployments" || a.Resource == "services") || a.Verb == "patch" {
			t.Errorf("a ReplicaSet job without Services or scaling needs %s", a)
		}
	}
}

// Check asks one SelfSubjectAccessReview per access and names every
// one the apiserver denies.
func TestCheck(t *testing.T) {
	cs := fake.NewClientset()
	var asked []string
	cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		rev := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
		ra := rev.Spec.ResourceAttributes
		asked = append(asked, ra.Verb+" "+ra.Resource)
		rev.Status.Allowed = ra.Resource != "namespaces" || ra.Verb == "list"
		return true, rev, nil
	})
	job := loadgen.Job{Namespaces: []string{"n0"}, Object: loadgen.ObjectTemplate{Kind: loadgen.KindReplicaSet}}
	err := Check(context.Background(), cs, "kc (context x)", Needs(&job))
	var perm *PermissionError
	if !errors.As(err, &perm) {
		t.Fatalf("err %v, want a PermissionError", err)
	}
	if len(perm.Missing) != 2 || !strings.Contains(err.Error(), "create namespaces") || !strings.Contains(err.Error(), "delete namespaces") || !strings.Contains(err.Error(), "kc (context x)") {
		t.Errorf("error %q, want create and delete namespaces named for kc", err)
	}
	if len(asked) != len(Needs(&job)) {
		t.Errorf("asked %d reviews, want one per access (%d)", len(asked), len(Needs(&job)))
	}
	cs2 := fake.NewClientset()
	cs2.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		rev := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
		rev.Status.Allowed = true
		return true, rev, nil
	})
	if err := Check(context.Background(), cs2, "kc", Needs(&job)); err != nil {
		t.Errorf("all allowed: %v", err)
	}
}
