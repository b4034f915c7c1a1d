package loadgen_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/internal/testenv"
	"github.com/kstep-dev/kstep/loadgen"
)

// Options.Labels go on everything the job creates, pods through the
// template, and not into the selector (which stays the job's own).
func TestLabelsOnEverythingCreated(t *testing.T) {
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, nil)
	cs := kubernetes.NewForConfigOrDie(api.Config)
	job := loadgen.Job{Name: "labels", Count: 2, QPS: 50, Namespaces: []string{"labels-a"}}
	job.Defaults()
	job.Object.Replicas = 0
	job.Object.Service = true
	run := map[string]string{"kstep.dev/run": "r1"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := loadgen.Run(ctx, &job, loadgen.Options{Client: cs, Labels: run}); err != nil {
		t.Fatal(err)
	}
	sel := metav1.ListOptions{LabelSelector: "kstep.dev/run=r1"}
	if ns, err := cs.CoreV1().Namespaces().Get(ctx, "labels-a", metav1.GetOptions{}); err != nil || ns.Labels["kstep.dev/run"] != "r1" {
		t.Errorf("namespace: %v %v", err, ns.Labels)
	}
	rss, err := cs.AppsV1().ReplicaSets("labels-a").List(ctx, sel)
	if err != nil || len(rss.Items) != 2 {
		t.Fatalf("labelled ReplicaSets: %v %d, want 2", err, len(rss.Items))
	}
	for _, rs := range rss.Items {
		if rs.Spec.Template.Labels["kstep.dev/run"] != "r1" || rs.Labels[loadgen.JobLabel] != "labels" {
			t.Errorf("%s: template labels %v, labels %v", rs.Name, rs.Spec.Template.Labels, rs.Labels)
		}
		if _, in := rs.Spec.Selector.MatchLabels["kstep.dev/run"]; in {
			t.Errorf("%s: the run label is in the selector %v", rs.Name, rs.Spec.Selector.MatchLabels)
		}
	}
	if svcs, err := cs.CoreV1().Services("labels-a").List(ctx, sel); err != nil || len(svcs.Items) != 2 {
		t.Errorf("labelled Services: %v %d, want 2", err, len(svcs.Items))
	}
}

// A job that deletes its objects deletes them also when its ready phase
// fails: no controller runs here, so no pod is ever Ready, and the job ends
// with the ready phase's error and nothing of it left.
func TestFailedReadyPhaseStillDeletes(t *testing.T) {
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, nil)
	cs := kubernetes.NewForConfigOrDie(api.Config)
	job := loadgen.Job{Name: "unready", Count: 3, QPS: 50, Namespaces: []string{"unready"}}
	job.Defaults()
	job.Object.Service = true
	job.Phases.Delete = true
	job.Timeouts.Ready.Duration = time.Second
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := loadgen.Run(ctx, &job, loadgen.Options{Client: cs})
	if err == nil || !strings.Contains(err.Error(), "ready phase") {
		t.Fatalf("err %v, want the ready phase's", err)
	}
	if rss, err := cs.AppsV1().ReplicaSets("unready").List(ctx, metav1.ListOptions{}); err != nil || len(rss.Items) != 0 {
		t.Errorf("ReplicaSets left: %v %d, want none", err, len(rss.Items))
	}
	if svcs, err := cs.CoreV1().Services("unready").List(ctx, metav1.ListOptions{}); err != nil || len(svcs.Items) != 0 {
		t.Errorf("Services left: %v %d, want none", err, len(svcs.Items))
	}
}
