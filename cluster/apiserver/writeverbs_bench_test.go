package apiserver_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// BenchmarkPodWriteVerbs measures the writes a pod's path makes through
// one apiserver on a real (embedded, one-member) etcd, one at a time:
// create (③), pods/binding (⑤), the kubelet's pods/status merge patch (⑧),
// and an Event's create. Each is a sub-benchmark, so a CPU profile of one
// shows what that verb costs beside the others.
func BenchmarkPodWriteVerbs(b *testing.B) {
	url, _ := testenv.Etcd(b)
	api := testenv.StartAPIServer(b, url, nil)
	cfg := *api.Config
	cfg.QPS, cfg.Burst = -1, 0
	cs, err := kubernetes.NewForConfig(&cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	ns := "bench"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	seq := 0
	create := func() *corev1.Pod {
		seq++
		p, err := cs.CoreV1().Pods(ns).Create(ctx, testPod(fmt.Sprintf("p%d", seq)), metav1.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	bind := func(p *corev1.Pod) {
		err := cs.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, UID: p.UID},
			Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}, metav1.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
	}
	status := func(p *corev1.Pod) {
		body := fmt.Sprintf(`{"metadata":{"uid":%q},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}],"containerStatuses":[{"name":"app","ready":true,"restartCount":0,"image":"registry.kstep.local/app:v1","imageID":"","started":true,"state":{"running":{"startedAt":"2026-01-01T00:00:00Z"}}}],"podIP":"10.0.0.1","podIPs":[{"ip":"10.0.0.1"}],"hostIP":"10.1.0.1","startTime":"2026-01-01T00:00:00Z"}}`, p.UID)
		if _, err := cs.CoreV1().Pods(ns).Patch(ctx, p.Name, types.MergePatchType, []byte(body), metav1.PatchOptions{}, "status"); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("create", func(b *testing.B) {
		for b.Loop() {
			create()
		}
	})
	// event: the create a kubelet's or a controller's event sink sends
	// beside each step (a third to a half of a pod's writes in a bench).
	b.Run("event", func(b *testing.B) {
		for b.Loop() {
			seq++
			now := metav1.Now()
			ev := &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("p%d.%x", seq, now.UnixNano()), Namespace: ns},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: fmt.Sprintf("p%d", seq), UID: "1b4e28ba-2fa1-11d2-883f-0016d3cca427", APIVersion: "v1", FieldPath: "spec.containers{app}"},
				Reason:         "Started", Message: "Started container app", Type: corev1.EventTypeNormal,
				Source:         corev1.EventSource{Component: "kubelet", Host: "n1"},
				FirstTimestamp: now, LastTimestamp: now, Count: 1,
				ReportingController: "kubelet", ReportingInstance: "n1",
			}
			if _, err := cs.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("binding", func(b *testing.B) {
		pods := make([]*corev1.Pod, b.N)
		for i := range pods {
			pods[i] = create()
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			bind(pods[i])
		}
	})
	b.Run("status", func(b *testing.B) {
		pods := make([]*corev1.Pod, b.N)
		for i := range pods {
			pods[i] = create()
			bind(pods[i])
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			status(pods[i])
		}
	})
}
