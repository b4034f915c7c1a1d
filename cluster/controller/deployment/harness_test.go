package deployment_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller"
	"github.com/kstep-dev/kstep/cluster/controller/deployment"
	"github.com/kstep-dev/kstep/cluster/controller/replicaset"
	"github.com/kstep-dev/kstep/internal/testenv"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
)

// The integration harness: a real etcd and apiserver, stand-in kubelets
// (testenv.Nodes), the real ReplicaSet controller beside ours, and — since
// the scheduler is not part of these tests — a test-only binder.

const ns = "default"

// startCluster brings up etcd, an apiserver, nodes n1 and n2 that run
// pods at once, node "stuck" whose kubelet never does (pods bound there
// stay Pending, never Ready), the binder, and the ReplicaSet and
// Deployment controllers.
func startCluster(t *testing.T) *testenv.Cluster {
	t.Helper()
	return startClusterWith(t, controller.DefaultOptions())
}

func startClusterWith(t *testing.T, opts controller.Options) *testenv.Cluster {
	t.Helper()
	c := testenv.StartCluster(t)
	nodes := testenv.StartNodes(t, c.Client, testenv.NodeSpec{Name: "n1"}, testenv.NodeSpec{Name: "n2"}, testenv.NodeSpec{Name: "stuck"})
	nodes.Pause("stuck")
	startBinder(t, c.Client, "n1", "n2")

	// Events go through client-go's recorder, as the controller-manager's
	// component, not through the eventsink ControllerContext starts.
	cc := testenv.ControllerContext(t, c.API.Config)
	cc.Options = opts
	ctx, cancel := context.WithCancel(context.Background())
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.Client.CoreV1().Events("")})
	cc.Recorder = broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kstep-controller-manager"})
	t.Cleanup(func() { cancel(); broadcaster.Shutdown() }) // after the controllers stop
	// Built in the manager's order (by name): with a PodWatchDelay the
	// first to ask for the pod informer builds the shared one.
	ctrls := []controller.Controller{deployment.New(cc), replicaset.New(cc)}
	if ctrls[0].Name() != "deployment" {
		t.Fatalf("controller name %q", ctrls[0].Name())
	}
	testenv.RunControllers(t, cc, ctrls...)
	return c
}

// startBinder is a TEST-ONLY stand-in for the scheduler (cluster/scheduler
// is not under test here): it binds every unbound pod through pods/binding,
// to the node its nodeSelector names by kubernetes.io/hostname, else to
// the given nodes in turn. No filtering, no scoring, no retries beyond the
// next event.
func startBinder(t *testing.T, cs kubernetes.Interface, nodes ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := informers.NewSharedInformerFactory(cs, 0)
	work := make(chan *corev1.Pod, 4096)
	add := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName == "" && p.DeletionTimestamp == nil {
			select {
			case work <- p:
			case <-ctx.Done():
			}
		}
	}
	_, _ = f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: add})
	f.Start(ctx.Done())
	done := make(chan struct{})
	go func() {
		defer close(done)
		next := 0
		for {
			select {
			case <-ctx.Done():
				return
			case p := <-work:
				node := p.Spec.NodeSelector["kubernetes.io/hostname"]
				if node == "" {
					node = nodes[next%len(nodes)]
					next++
				}
				b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID},
					Target: corev1.ObjectReference{Kind: "Node", Name: node}}
				_ = cs.CoreV1().Pods(p.Namespace).Bind(ctx, b, metav1.CreateOptions{})
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done; f.Shutdown() })
}

// newDeployment is a Deployment of registry.kstep.local/app:v1.
func newDeployment(name string, replicas int32, strategy appsv1.DeploymentStrategy) *appsv1.Deployment {
	l := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: l},
			Strategy: strategy,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.kstep.local/app:v1"}}},
			},
		},
	}
}

func rollingUpdate(surge, unavailable int) appsv1.DeploymentStrategy {
	s, u := intOrStr(surge), intOrStr(unavailable)
	return appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &s, MaxUnavailable: &u}}
}

// setImage changes the template's image (and nodeSelector: "stuck" sends
// the new pods to the node that never runs them), retrying conflicts.
func setImage(t *testing.T, cs kubernetes.Interface, name, image string, nodeSelector map[string]string) {
	t.Helper()
	update(t, cs, name, func(d *appsv1.Deployment) {
		d.Spec.Template.Spec.Containers[0].Image = image
		d.Spec.Template.Spec.NodeSelector = nodeSelector
	})
}

func update(t *testing.T, cs kubernetes.Interface, name string, mutate func(*appsv1.Deployment)) *appsv1.Deployment {
	t.Helper()
	ctx := context.Background()
	for i := 0; ; i++ {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mutate(d)
		out, err := cs.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{})
		if err == nil {
			return out
		}
		if i > 20 {
			t.Fatalf("update deployment %s: %v", name, err)
		}
	}
}

func getDeployment(t *testing.T, cs kubernetes.Interface, name string) *appsv1.Deployment {
	t.Helper()
	d, err := cs.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// replicaSets lists the ReplicaSets d controls, by revision annotation.
func replicaSets(t *testing.T, cs kubernetes.Interface, d *appsv1.Deployment) map[string]*appsv1.ReplicaSet {
	t.Helper()
	l, err := cs.AppsV1().ReplicaSets(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*appsv1.ReplicaSet{}
	for i := range l.Items {
		rs := &l.Items[i]
		if ref := metav1.GetControllerOf(rs); ref != nil && ref.UID == d.UID {
			out[rs.Annotations[deployment.RevisionAnnotation]] = rs
		}
	}
	return out
}

func progressingReason(d *appsv1.Deployment) string {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing {
			return c.Reason
		}
	}
	return ""
}

func condition(d *appsv1.Deployment, typ appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == typ {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

// rolledOut is `kubectl rollout status`'s success, plus the Progressing
// reason.
func rolledOut(d *appsv1.Deployment) bool {
	r := ptr.Deref(d.Spec.Replicas, 1)
	return d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == r && d.Status.Replicas == r &&
		d.Status.AvailableReplicas == r && progressingReason(d) == deployment.ReasonNewReplicaSetAvailable
}

func waitRolledOut(t *testing.T, cs kubernetes.Interface, name string, timeout time.Duration) *appsv1.Deployment {
	t.Helper()
	var d *appsv1.Deployment
	testenv.Eventually(t, timeout, "deployment "+name+" rolled out", func() (bool, error) {
		d = getDeployment(t, cs, name)
		return rolledOut(d), fmt.Errorf("generation %d status %+v", d.Generation, d.Status)
	}, fastPoll)
	return d
}

// fastPoll is how often these tests poll: every 25 ms, so that a state
// a rollout passes through is seen.
var fastPoll = testenv.Every(25 * time.Millisecond)

// podWatch follows every pod of a label through a watch opened before the
// change under test, and calls observe with the whole set after each
// event: every state a watcher can see.
type podWatch struct {
	mu      sync.Mutex
	pods    map[types.UID]*corev1.Pod
	events  int
	observe func(pods map[types.UID]*corev1.Pod)
}

func watchPods(t *testing.T, cs kubernetes.Interface, selector string, observe func(map[types.UID]*corev1.Pod)) *podWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &podWatch{pods: map[types.UID]*corev1.Pod{}, observe: observe}
	l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	for i := range l.Items {
		w.pods[l.Items[i].UID] = &l.Items[i]
	}
	rv := l.ResourceVersion
	w.mu.Lock()
	w.observe(w.pods)
	w.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			wi, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: rv, AllowWatchBookmarks: true})
			if err != nil {
				if ctx.Err() == nil {
					t.Errorf("pod watch: %v", err)
				}
				return
			}
			for ev := range wi.ResultChan() {
				if ctx.Err() != nil {
					break // cleanup: the stream ends with an error event
				}
				if ev.Type == watch.Error {
					t.Errorf("pod watch error event: %v", ev.Object)
					continue
				}
				m, err := apimeta.Accessor(ev.Object)
				if err != nil {
					continue
				}
				rv = m.GetResourceVersion()
				p, ok := ev.Object.(*corev1.Pod)
				if !ok || ev.Type == watch.Bookmark {
					continue
				}
				w.mu.Lock()
				if ev.Type == watch.Deleted {
					delete(w.pods, p.UID)
				} else {
					w.pods[p.UID] = p
				}
				w.events++
				w.observe(w.pods)
				w.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

func (w *podWatch) Events() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.events
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func image(p *corev1.Pod) string { return p.Spec.Containers[0].Image }

func intOrStr(v int) intstr.IntOrString { return intstr.FromInt32(int32(v)) }
