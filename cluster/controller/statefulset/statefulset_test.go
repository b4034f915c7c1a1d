package statefulset_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller/statefulset"
	"github.com/kstep-dev/kstep/internal/testenv"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// start runs the StatefulSet controller against a real apiserver, and a
// stand-in kubelet that makes every pod Running and Ready.
func start(t *testing.T) kubernetes.Interface {
	t.Helper()
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, nil)
	cc := testenv.ControllerContext(t, api.Config)
	testenv.RunController(t, statefulset.New(cc), cc)
	cs := cc.Client
	ctx, cancel := context.WithCancel(context.Background())
	kubelet := make(chan struct{})
	go func() {
		defer close(kubelet)
		for ctx.Err() == nil {
			l, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
			if err == nil {
				for _, p := range l.Items {
					if p.Status.Phase == corev1.PodRunning || p.DeletionTimestamp != nil {
						continue
					}
					p.Status.Phase = corev1.PodRunning
					p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
					_, _ = cs.CoreV1().Pods("default").UpdateStatus(ctx, &p, metav1.UpdateOptions{})
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { cancel(); <-kubelet })
	return cs
}

// names are the live pods' names, by ordinal.
func names(t *testing.T, cs kubernetes.Interface) []string {
	t.Helper()
	l, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=db"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p.Name)
		}
	}
	sort.Slice(out, func(a, b int) bool { return len(out[a]) < len(out[b]) || len(out[a]) == len(out[b]) && out[a] < out[b] })
	return out
}

func want(n int) string {
	var s []string
	for i := range n {
		s = append(s, fmt.Sprintf("db-%d", i))
	}
	return strings.Join(s, ",")
}

// waitOrdered waits for exactly db-0..db-(n-1), checking on every look
// that the live pods are a prefix of the ordinals (OrderedReady).
func waitOrdered(t *testing.T, cs kubernetes.Interface, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := names(t, cs)
		if j := strings.Join(got, ","); j != want(len(got)) {
			t.Fatalf("pods %v are not ordinals 0..%d", got, len(got)-1)
		} else if len(got) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %d pods: %v", n, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStatefulSetOrderedScaleAndPartitionedUpdate: 5 pods with stable,
// ordered names, scaled to 10 and back to 3 from the top; a template
// change with partition 1 replaces db-2 and db-1, not db-0.
func TestStatefulSetOrderedScaleAndPartitionedUpdate(t *testing.T) {
	cs := start(t)
	ctx := context.Background()
	l := map[string]string{"app": "db"}
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(int32(5)), ServiceName: "db", Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "registry.kstep.local/app:v1"}}}}}}
	sets := cs.AppsV1().StatefulSets("default")
	if _, err := sets.Create(ctx, set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitOrdered(t, cs, 5)
	p, err := cs.CoreV1().Pods("default").Get(ctx, "db-3", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.Hostname != "db-3" || p.Spec.Subdomain != "db" || p.Labels[appsv1.PodIndexLabel] != "3" || p.Labels[appsv1.StatefulSetPodNameLabel] != "db-3" {
		t.Fatalf("db-3: hostname %q subdomain %q labels %v", p.Spec.Hostname, p.Spec.Subdomain, p.Labels)
	}
	for _, n := range []int{10, 3} {
		if _, err := sets.Patch(ctx, "db", types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)), metav1.PatchOptions{}, "scale"); err != nil {
			t.Fatal(err)
		}
		waitOrdered(t, cs, n)
	}
	hash := func(name string) string {
		p, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil || p.DeletionTimestamp != nil {
			return ""
		}
		return p.Labels[appsv1.ControllerRevisionHashLabelKey]
	}
	old := hash("db-0")
	if _, err := sets.Patch(ctx, "db", types.MergePatchType,
		[]byte(`{"spec":{"updateStrategy":{"rollingUpdate":{"partition":1}},"template":{"spec":{"containers":[{"name":"db","image":"registry.kstep.local/app:v2"}]}}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !(hash("db-1") != "" && hash("db-1") != old && hash("db-2") != "" && hash("db-2") != old) {
		if time.Now().After(deadline) {
			t.Fatalf("db-1 and db-2 not updated: %q %q (old %q)", hash("db-1"), hash("db-2"), old)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var st appsv1.StatefulSetStatus
	deadline = time.Now().Add(30 * time.Second)
	for {
		got, err := sets.Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st = got.Status; st.UpdatedReplicas == 2 && st.Replicas == 3 && st.ReadyReplicas == 3 && st.ObservedGeneration == got.Generation {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if hash("db-0") != old {
		t.Fatalf("db-0, below the partition, was updated")
	}
}
