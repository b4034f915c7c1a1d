package loadgen_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/internal/testenv"
	"github.com/kstep-dev/kstep/loadgen"
)

// A load cut short and run again creates only what is missing and ends
// with exactly the job's objects: the client row (kstep load killed and
// run again).
func TestRunAgainResumesToTheSameObjects(t *testing.T) {
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, nil)
	cs := kubernetes.NewForConfigOrDie(api.Config)
	job := loadgen.Job{Name: "resume", Count: 12, QPS: 20, Namespaces: []string{"resume-a", "resume-b"}}
	job.Defaults()
	job.Object.Replicas = 0 // no pods: the objects are the point

	// The first run dies once 5 objects exist.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	go func() {
		defer cancel()
		for ctx.Err() == nil {
			n := 0
			for _, ns := range job.Namespaces {
				if l, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{}); err == nil {
					n += len(l.Items)
				}
			}
			if n >= 5 {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	first, _ := loadgen.Run(ctx, &job, loadgen.Options{Client: cs})
	cancel()
	made := 0
	for _, w := range first.Writes {
		if w.Op == "create" {
			made++
		}
	}
	if made == 0 || made >= job.Count {
		t.Fatalf("the first run created %d of %d; the test needs it cut short", made, job.Count)
	}

	second, err := loadgen.Run(context.Background(), &job, loadgen.Options{Client: cs})
	if err != nil {
		t.Fatal(err)
	}
	again := 0
	for _, w := range second.Writes {
		if w.Op == "create" {
			again++
		}
	}
	// A create in flight when the first run died may have landed
	// unrecorded: the second run finds it and does not create it again.
	if again > job.Count-made || again == job.Count {
		t.Errorf("first run created %d, second %d of %d: the second must create only what is missing", made, again, job.Count)
	}
	names := map[string]bool{}
	for _, ns := range job.Namespaces {
		l, err := cs.AppsV1().ReplicaSets(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.Items {
			names[ns+"/"+r.Name] = true
		}
	}
	if len(names) != job.Count {
		t.Fatalf("%d ReplicaSets at the end, want %d: %v", len(names), job.Count, names)
	}
}
