package loadgen_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/internal/testenv"
	"github.com/kstep-dev/kstep/loadgen"
)

// A create that fails for good ends the run at once, naming it, and the
// job's objects are deleted: its pod would never come, so waiting for it
// would only wait out the ready timeout and then blame readiness.
func TestFailedCreateEndsTheRun(t *testing.T) {
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, nil)
	cs := kubernetes.NewForConfigOrDie(api.Config)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const ns = "createfail"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Not the job's (no job label), with the name of its object 1: that
	// create is a 409.
	zero := int32(0)
	taken := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "createfail-1"},
		Spec: appsv1.ReplicaSetSpec{Replicas: &zero, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"x": "y"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}}}
	if _, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, taken, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	job := loadgen.Job{Name: "createfail", Count: 3, QPS: 50, Namespaces: []string{ns}}
	job.Defaults()
	job.Phases.Delete = true
	job.Timeouts.Ready.Duration = 40 * time.Second // no node runs the pods
	start := time.Now()
	_, err := loadgen.Run(ctx, &job, loadgen.Options{Client: cs})
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "create phase: 1 of 3 creates failed") || !strings.Contains(err.Error(), "createfail-1") {
		t.Fatalf("run: %v, want the failed create named", err)
	}
	if took > 20*time.Second {
		t.Fatalf("the run ended after %v: it waited for the pod that never comes", took)
	}
	t.Logf("ended after %v: %v", took, err)
	l, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: loadgen.JobLabel + "=createfail"})
	if err != nil || len(l.Items) != 0 {
		t.Fatalf("the job's ReplicaSets left: %v %d", err, len(l.Items))
	}
}

// A Service the job made already (a run killed between an object's Service
// and the object) counts as created when the job runs again, as the
// objects do; a Service of that name that is not the job's fails the run.
func TestRunAgainAdoptsTheJobsService(t *testing.T) {
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, nil)
	cs := kubernetes.NewForConfigOrDie(api.Config)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range []struct {
		ns, job string
		labels  map[string]string
		fails   bool
	}{
		{"adopt", "adopt", map[string]string{loadgen.JobLabel: "adopt"}, false},
		{"foreign", "foreign", map[string]string{loadgen.JobLabel: "another"}, true},
	} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: c.job + "-0", Labels: c.labels},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
		if _, err := cs.CoreV1().Services(c.ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		job := loadgen.Job{Name: c.job, Count: 2, QPS: 50, Namespaces: []string{c.ns}}
		job.Defaults()
		job.Object.Replicas = 0
		job.Object.Service = true
		_, err := loadgen.Run(ctx, &job, loadgen.Options{Client: cs})
		if c.fails != (err != nil) || (c.fails && !strings.Contains(err.Error(), "not this job's")) {
			t.Fatalf("%s: run: %v (want failure: %v)", c.ns, err, c.fails)
		}
		if !c.fails {
			l, err := cs.CoreV1().Services(c.ns).List(ctx, metav1.ListOptions{})
			if err != nil || len(l.Items) != 2 {
				t.Fatalf("%s: Services: %v %d, want 2", c.ns, err, len(l.Items))
			}
		}
	}
}
