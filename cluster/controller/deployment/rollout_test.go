package deployment_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller"
	"github.com/kstep-dev/kstep/cluster/controller/deployment"
	"github.com/kstep-dev/kstep/internal/testenv"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// bounds records, over every state a pod watcher saw, the most pods that
// were not terminating and the fewest available ones (Ready and not
// terminating; minReadySeconds is 0).
type bounds struct {
	mu                 sync.Mutex
	armed              bool
	maxPods, minAvail  int
	maxWithTerminating int
	states             int
}

func (b *bounds) observe(pods map[types.UID]*corev1.Pod) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.armed {
		return
	}
	total, avail := 0, 0
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		total++
		if ready(p) {
			avail++
		}
	}
	b.states++
	b.maxPods = max(b.maxPods, total)
	b.minAvail = min(b.minAvail, avail)
	b.maxWithTerminating = max(b.maxWithTerminating, len(pods))
}

func (b *bounds) arm() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.armed, b.maxPods, b.minAvail, b.maxWithTerminating, b.states = true, 0, 1<<30, 0, 0
}

func (b *bounds) read() (maxPods, minAvail, maxAll, states int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.maxPods, b.minAvail, b.maxWithTerminating, b.states
}

// A rolling update of 10 replicas from app:v1 to app:v2 with maxSurge 2
// and maxUnavailable 1 never shows a watcher more than 12 pods or fewer
// than 9 available; then a rollback the way kubectl rollout undo does it
// (patch the v1 ReplicaSet's template back) returns to v1 on the old
// ReplicaSet under revision 3, within the same bounds.
func TestRollingUpdateBoundsAndRollback(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	d, err := c.Client.AppsV1().Deployments(ns).Create(ctx, newDeployment("web", 10, rollingUpdate(2, 1)), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	d = waitRolledOut(t, c.Client, "web", 60*time.Second)
	t.Logf("initial rollout of 10 pods: %v", time.Since(start).Round(time.Millisecond))
	if a := condition(d, appsv1.DeploymentAvailable); a == nil || a.Status != corev1.ConditionTrue || a.Reason != deployment.ReasonMinimumReplicasAvailable {
		t.Fatalf("Available condition: %+v", a)
	}
	rss := replicaSets(t, c.Client, d)
	v1 := rss["1"]
	if len(rss) != 1 || v1 == nil || d.Annotations[deployment.RevisionAnnotation] != "1" {
		t.Fatalf("after create: replicasets by revision %v, deployment revision %q", keys(rss), d.Annotations[deployment.RevisionAnnotation])
	}
	checkReplicaSetShape(t, d, v1)

	b := &bounds{}
	w := watchPods(t, c.Client, "app=web", b.observe)
	b.arm()

	start = time.Now()
	setImage(t, c.Client, "web", "registry.kstep.local/app:v2", nil)
	d = waitRolledOut(t, c.Client, "web", 60*time.Second)
	took := time.Since(start)
	time.Sleep(300 * time.Millisecond) // let the watcher drain
	maxPods, minAvail, maxAll, states := b.read()
	t.Logf("v1 -> v2: %v; watcher saw %d states (%d events): max %d pods (limit 12; %d counting terminating), min %d available (limit 9)",
		took.Round(time.Millisecond), states, w.Events(), maxPods, maxAll, minAvail)
	if maxPods > 12 || minAvail < 9 {
		t.Errorf("rolling update broke its bounds: max %d pods (limit 12), min %d available (limit 9)", maxPods, minAvail)
	}
	if states < 20 {
		t.Errorf("the watcher saw only %d states: the rollout was not observed", states)
	}
	rss = replicaSets(t, c.Client, d)
	v2 := rss["2"]
	if len(rss) != 2 || v2 == nil || rss["1"] == nil || *rss["1"].Spec.Replicas != 0 || *v2.Spec.Replicas != 10 {
		t.Fatalf("after v2: replicasets %v", describe(rss))
	}
	if d.Annotations[deployment.RevisionAnnotation] != "2" || progressingReason(d) != deployment.ReasonNewReplicaSetAvailable {
		t.Fatalf("after v2: revision %q, progressing %q", d.Annotations[deployment.RevisionAnnotation], progressingReason(d))
	}
	checkReplicaSetShape(t, d, v2)
	assertPods(t, c, "app=web", 10, "registry.kstep.local/app:v2")

	// Rollback as kubectl 1.32 does it, client-side.
	b.arm()
	start = time.Now()
	kubectlUndo(t, c, "web", "1")
	d = waitRolledOut(t, c.Client, "web", 60*time.Second)
	took = time.Since(start)
	time.Sleep(300 * time.Millisecond)
	maxPods, minAvail, maxAll, states = b.read()
	t.Logf("rollback to v1: %v; watcher saw %d states: max %d pods (%d counting terminating), min %d available",
		took.Round(time.Millisecond), states, maxPods, maxAll, minAvail)
	if maxPods > 12 || minAvail < 9 {
		t.Errorf("rollback broke its bounds: max %d pods (limit 12), min %d available (limit 9)", maxPods, minAvail)
	}
	rss = replicaSets(t, c.Client, d)
	back := rss["3"]
	if len(rss) != 2 || back == nil || back.UID != v1.UID || rss["2"] == nil || *rss["2"].Spec.Replicas != 0 {
		t.Fatalf("after rollback: replicasets %v (want the v1 ReplicaSet %s as revision 3)", describe(rss), v1.Name)
	}
	if h := back.Annotations[deployment.RevisionHistoryAnnotation]; h != "1" {
		t.Errorf("revision-history of the reused ReplicaSet: %q, want \"1\"", h)
	}
	if d.Annotations[deployment.RevisionAnnotation] != "3" || d.Spec.Template.Spec.Containers[0].Image != "registry.kstep.local/app:v1" {
		t.Errorf("after rollback: revision %q image %q", d.Annotations[deployment.RevisionAnnotation], d.Spec.Template.Spec.Containers[0].Image)
	}
	assertPods(t, c, "app=web", 10, "registry.kstep.local/app:v1")

	// The controller reported what it did as events on the Deployment.
	testenv.Eventually(t, 10*time.Second, "ScalingReplicaSet events", func() (bool, error) {
		evs, err := c.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=web"})
		if err != nil {
			return false, err
		}
		n := 0
		for _, e := range evs.Items {
			if e.Reason == "ScalingReplicaSet" {
				n++
			}
		}
		return n >= 4, fmt.Errorf("%d ScalingReplicaSet events", n)
	}, fastPoll)
}

// checkReplicaSetShape: name <deployment>-<hash>, the hash label on its
// labels, selector and template, controller owner reference with
// blockOwnerDeletion, replica annotations.
func checkReplicaSetShape(t *testing.T, d *appsv1.Deployment, rs *appsv1.ReplicaSet) {
	t.Helper()
	h := rs.Labels[deployment.UniqueLabelKey]
	if h == "" || rs.Name != d.Name+"-"+h || rs.Spec.Selector.MatchLabels[deployment.UniqueLabelKey] != h ||
		rs.Spec.Template.Labels[deployment.UniqueLabelKey] != h {
		t.Errorf("replicaset %s: hash label %q, selector %v, template labels %v", rs.Name, h, rs.Spec.Selector.MatchLabels, rs.Spec.Template.Labels)
	}
	if want := deployment.ComputeHash(&d.Spec.Template, d.Status.CollisionCount); rs.Spec.Template.Spec.Containers[0].Image == d.Spec.Template.Spec.Containers[0].Image && h != want {
		t.Errorf("replicaset %s hash %q, ComputeHash of the stored template %q", rs.Name, h, want)
	}
	ref := metav1.GetControllerOf(rs)
	if ref == nil || ref.UID != d.UID || ref.Kind != "Deployment" || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		t.Errorf("replicaset %s owner: %+v", rs.Name, rs.OwnerReferences)
	}
	if rs.Annotations[deployment.DesiredReplicasAnnotation] == "" || rs.Annotations[deployment.MaxReplicasAnnotation] == "" {
		t.Errorf("replicaset %s annotations: %v", rs.Name, rs.Annotations)
	}
}

// kubectlUndo does what `kubectl rollout undo --to-revision` does in
// kubectl 1.32 (pkg/polymorphichelpers/rollback.go): read the ReplicaSet
// of the revision, and JSON-patch its template (hash label removed) and
// its annotations (but the skipped ones) into the Deployment.
func kubectlUndo(t *testing.T, c *testenv.Cluster, name, revision string) {
	t.Helper()
	d := getDeployment(t, c.Client, name)
	rs := replicaSets(t, c.Client, d)[revision]
	if rs == nil {
		t.Fatalf("no replicaset of revision %s", revision)
	}
	skip := map[string]bool{corev1.LastAppliedConfigAnnotation: true, deployment.RevisionAnnotation: true,
		deployment.RevisionHistoryAnnotation: true, deployment.DesiredReplicasAnnotation: true,
		deployment.MaxReplicasAnnotation: true, "deprecated.deployment.rollback.to": true}
	tmpl := rs.Spec.Template.DeepCopy()
	delete(tmpl.Labels, deployment.UniqueLabelKey)
	annotations := map[string]string{}
	for k := range skip {
		if v, ok := d.Annotations[k]; ok {
			annotations[k] = v
		}
	}
	for k, v := range rs.Annotations {
		if !skip[k] {
			annotations[k] = v
		}
	}
	patch, _ := json.Marshal([]any{
		map[string]any{"op": "replace", "path": "/spec/template", "value": tmpl},
		map[string]any{"op": "replace", "path": "/metadata/annotations", "value": annotations},
	})
	if _, err := c.Client.AppsV1().Deployments(ns).Patch(context.Background(), name, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("rollback patch: %v", err)
	}
}

// assertPods waits until the label has exactly n pods that are not
// terminating, all of image and Ready. Terminating pods are left out: on
// the "stuck" node nothing ever finishes their deletion.
func assertPods(t *testing.T, c *testenv.Cluster, selector string, n int, img string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, fmt.Sprintf("%d Ready pods of %s", n, img), func() (bool, error) {
		l, err := c.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err
		}
		var seen []string
		live, ok := 0, true
		for i := range l.Items {
			p := &l.Items[i]
			if p.DeletionTimestamp != nil {
				continue
			}
			live++
			seen = append(seen, fmt.Sprintf("%s:%s:ready=%v", p.Name, image(p), ready(p)))
			if image(p) != img || !ready(p) {
				ok = false
			}
		}
		return ok && live == n, errors.New(strings.Join(seen, " "))
	}, fastPoll)
}

func keys(m map[string]*appsv1.ReplicaSet) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func describe(m map[string]*appsv1.ReplicaSet) string {
	var parts []string
	for rev, rs := range m {
		parts = append(parts, fmt.Sprintf("rev %s %s replicas %d/%d image %s", rev, rs.Name, ptr.Deref(rs.Spec.Replicas, -1),
			rs.Status.Replicas, rs.Spec.Template.Spec.Containers[0].Image))
	}
	return strings.Join(parts, "; ")
}

// The same bounds with every pod event reaching both controllers 300 ms
// late (Options.PodWatchDelay, the failpoint of a slow watch): decisions
// are made on stale pod caches and must still never overshoot.
func TestRollingUpdateBoundsSlowPodWatch(t *testing.T) {
	opts := controller.DefaultOptions()
	opts.PodWatchDelay = 300 * time.Millisecond
	c := startClusterWith(t, opts)
	ctx := context.Background()
	if _, err := c.Client.AppsV1().Deployments(ns).Create(ctx, newDeployment("slow", 10, rollingUpdate(2, 1)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRolledOut(t, c.Client, "slow", 60*time.Second)
	b := &bounds{}
	watchPods(t, c.Client, "app=slow", b.observe)
	for i, img := range []string{"registry.kstep.local/app:v2", "registry.kstep.local/app:v3"} {
		b.arm()
		start := time.Now()
		setImage(t, c.Client, "slow", img, nil)
		waitRolledOut(t, c.Client, "slow", 90*time.Second)
		took := time.Since(start)
		time.Sleep(500 * time.Millisecond)
		maxPods, minAvail, maxAll, states := b.read()
		t.Logf("rollout %d with a 300 ms pod watch: %v; %d states: max %d pods (%d counting terminating), min %d available",
			i+1, took.Round(time.Millisecond), states, maxPods, maxAll, minAvail)
		if maxPods > 12 || minAvail < 9 {
			t.Errorf("rollout %d broke its bounds: max %d pods (limit 12), min %d available (limit 9)", i+1, maxPods, minAvail)
		}
		assertPods(t, c, "app=slow", 10, img)
	}
}

// Recreate: the old pods are all gone (not just terminating) before the
// first new pod exists.
func TestRecreateNeverOverlaps(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	if _, err := c.Client.AppsV1().Deployments(ns).Create(ctx, newDeployment("batch", 5,
		appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRolledOut(t, c.Client, "batch", 60*time.Second)
	var mu sync.Mutex
	overlaps, states, maxOld, maxNew := 0, 0, 0, 0
	watchPods(t, c.Client, "app=batch", func(pods map[types.UID]*corev1.Pod) {
		mu.Lock()
		defer mu.Unlock()
		old, nw := 0, 0
		for _, p := range pods {
			if image(p) == "registry.kstep.local/app:v1" {
				old++
			} else {
				nw++
			}
		}
		states++
		maxOld, maxNew = max(maxOld, old), max(maxNew, nw)
		if old > 0 && nw > 0 {
			overlaps++
		}
	})
	start := time.Now()
	setImage(t, c.Client, "batch", "registry.kstep.local/app:v2", nil)
	d := waitRolledOut(t, c.Client, "batch", 60*time.Second)
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	t.Logf("recreate v1 -> v2: %v; %d states, %d with old and new pods together (max old %d, max new %d)",
		time.Since(start).Round(time.Millisecond), states, overlaps, maxOld, maxNew)
	if overlaps > 0 || maxNew != 5 {
		t.Errorf("recreate overlapped in %d states (max new %d)", overlaps, maxNew)
	}
	mu.Unlock()
	assertPods(t, c, "app=batch", 5, "registry.kstep.local/app:v2")
	if rss := replicaSets(t, c.Client, d); len(rss) != 2 || *rss["1"].Spec.Replicas != 0 || *rss["2"].Spec.Replicas != 5 {
		t.Errorf("replicasets after recreate: %s", describe(rss))
	}
}

// Pause stops a rollout; while paused, scaling is proportional; resuming
// rolls over to the latest template. The rollout in the middle is stalled
// on purpose: its new pods go to a node whose kubelet never runs them.
func TestPauseScaleResume(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	d, err := c.Client.AppsV1().Deployments(ns).Create(ctx, newDeployment("api", 10, rollingUpdate(3, 2)), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitRolledOut(t, c.Client, "api", 60*time.Second)

	// Paused: a new template starts nothing.
	pause(t, c, "api", true)
	d = update(t, c.Client, "api", func(d *appsv1.Deployment) {
		d.Spec.Template.Spec.Containers[0].Image = "registry.kstep.local/app:v2"
		d.Spec.Template.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "stuck"}
	})
	testenv.Eventually(t, 10*time.Second, "paused generation observed", func() (bool, error) {
		d = getDeployment(t, c.Client, "api")
		return d.Status.ObservedGeneration == d.Generation && progressingReason(d) == deployment.ReasonDeploymentPaused,
			fmt.Errorf("observed %d of %d, progressing %q", d.Status.ObservedGeneration, d.Generation, progressingReason(d))
	}, fastPoll)
	time.Sleep(1500 * time.Millisecond)
	if rss := replicaSets(t, c.Client, d); len(rss) != 1 {
		t.Fatalf("a paused deployment rolled out: %s", describe(rss))
	}
	if p := condition(d, appsv1.DeploymentProgressing); p.Status != corev1.ConditionUnknown {
		t.Errorf("paused Progressing status %s", p.Status)
	}
	assertPods(t, c, "app=api", 10, "registry.kstep.local/app:v1")

	// Resumed: the rollout starts and stalls, 3 surge and 2 unavailable
	// spent: old 8, new 5 (never Ready).
	pause(t, c, "api", false)
	var old, nw *appsv1.ReplicaSet
	testenv.Eventually(t, 20*time.Second, "the rollout to stall at 8 old + 5 new", func() (bool, error) {
		d = getDeployment(t, c.Client, "api")
		rss := replicaSets(t, c.Client, d)
		old, nw = rss["1"], rss["2"]
		return old != nil && nw != nil && *old.Spec.Replicas == 8 && *nw.Spec.Replicas == 5 && old.Status.AvailableReplicas == 8, errors.New(describe(rss))
	}, fastPoll)
	time.Sleep(time.Second)
	if rss := replicaSets(t, c.Client, d); *rss["1"].Spec.Replicas != 8 || *rss["2"].Spec.Replicas != 5 {
		t.Fatalf("the stalled rollout moved: %s", describe(rss))
	}
	if r := progressingReason(getDeployment(t, c.Client, "api")); r != deployment.ReasonReplicaSetUpdated && r != deployment.ReasonNewReplicaSetCreated {
		t.Errorf("stalled rollout Progressing reason %q", r)
	}

	// Paused mid-rollout and scaled 10 -> 20 through the scale subresource
	// (kubectl scale): 20+3 replicas spread over 8:5 as 14:9.
	pause(t, c, "api", true)
	if _, err := c.Client.AppsV1().Deployments(ns).Patch(ctx, "api", types.MergePatchType, []byte(`{"spec":{"replicas":20}}`), metav1.PatchOptions{}, "scale"); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "proportional scale to 14 old + 9 new", func() (bool, error) {
		rss := replicaSets(t, c.Client, d)
		old, nw = rss["1"], rss["2"]
		return *old.Spec.Replicas == 14 && *nw.Spec.Replicas == 9 &&
			old.Annotations[deployment.DesiredReplicasAnnotation] == "20" && nw.Annotations[deployment.MaxReplicasAnnotation] == "23", errors.New(describe(rss))
	}, fastPoll)
	t.Logf("paused mid-rollout at 8 old + 5 new, scaled 10 -> 20: old %d, new %d", *old.Spec.Replicas, *nw.Spec.Replicas)

	// A third template, runnable, then resume: everything rolls over to v3.
	setImage(t, c.Client, "api", "registry.kstep.local/app:v3", nil)
	pause(t, c, "api", false)
	d = waitRolledOut(t, c.Client, "api", 90*time.Second)
	assertPods(t, c, "app=api", 20, "registry.kstep.local/app:v3")
	rss := replicaSets(t, c.Client, d)
	if len(rss) != 3 || *rss["1"].Spec.Replicas != 0 || *rss["2"].Spec.Replicas != 0 || *rss["3"].Spec.Replicas != 20 {
		t.Fatalf("after resume: %s", describe(rss))
	}
}

func pause(t *testing.T, c *testenv.Cluster, name string, paused bool) {
	t.Helper()
	body := fmt.Sprintf(`{"spec":{"paused":%v}}`, paused)
	if _, err := c.Client.AppsV1().Deployments(ns).Patch(context.Background(), name, types.StrategicMergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A rollout whose pods never become ready reports ProgressDeadlineExceeded
// once progressDeadlineSeconds pass without progress.
func TestProgressDeadlineExceeded(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	dep := newDeployment("late", 2, rollingUpdate(1, 0))
	dep.Spec.ProgressDeadlineSeconds = ptr.To[int32](2)
	if _, err := c.Client.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRolledOut(t, c.Client, "late", 60*time.Second)
	start := time.Now()
	setImage(t, c.Client, "late", "registry.kstep.local/app:v2", map[string]string{"kubernetes.io/hostname": "stuck"})
	var d *appsv1.Deployment
	testenv.Eventually(t, 20*time.Second, "ProgressDeadlineExceeded", func() (bool, error) {
		d = getDeployment(t, c.Client, "late")
		p := condition(d, appsv1.DeploymentProgressing)
		return p != nil && p.Status == corev1.ConditionFalse && p.Reason == deployment.ReasonProgressDeadlineExceeded, fmt.Errorf("%+v", d.Status.Conditions)
	}, fastPoll)
	took := time.Since(start)
	t.Logf("ProgressDeadlineExceeded %v after the update (deadline 2 s)", took.Round(time.Millisecond))
	if took < 2*time.Second {
		t.Errorf("deadline reported after %v, before the 2 s deadline", took)
	}
	if a := condition(d, appsv1.DeploymentAvailable); a == nil || a.Status != corev1.ConditionTrue {
		t.Errorf("Available during the stalled rollout: %+v (old pods still serve)", a)
	}
	if _, err := exec.LookPath("kubectl"); err == nil {
		out, err := newKubectl(t, c).Try("rollout", "status", "deployment/late", "--timeout=20s")
		if err == nil || !strings.Contains(out, `deployment "late" exceeded its progress deadline`) {
			t.Errorf("kubectl rollout status on a timed-out rollout: %v: %s", err, out)
		}
	}
}

// minReadySeconds reaches the ReplicaSets (also a change of it alone, on
// the current one), and a rollout waits for new pods to be available —
// Ready for that long — before it removes old ones.
func TestMinReadySeconds(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	dep := newDeployment("slowstart", 2, rollingUpdate(1, 0))
	dep.Spec.MinReadySeconds = 2
	if _, err := c.Client.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRolledOut(t, c.Client, "slowstart", 60*time.Second)
	b := &bounds{}
	watchPods(t, c.Client, "app=slowstart", b.observe)
	b.arm()
	start := time.Now()
	setImage(t, c.Client, "slowstart", "registry.kstep.local/app:v2", nil)
	d := waitRolledOut(t, c.Client, "slowstart", 60*time.Second)
	took := time.Since(start)
	maxPods, minReady, _, _ := b.read()
	t.Logf("2 replicas, surge 1, unavailable 0, minReadySeconds 2: rollout took %v; max %d pods, min %d Ready", took.Round(time.Millisecond), maxPods, minReady)
	// Two rounds, each waiting for a pod to be Ready for 2 s (more than 1 s
	// even with condition times truncated to the second).
	if took < 2*time.Second {
		t.Errorf("rollout took %v: it did not wait for availability", took)
	}
	if maxPods > 3 || minReady < 2 {
		t.Errorf("bounds: max %d pods (limit 3), min %d Ready (limit 2)", maxPods, minReady)
	}
	rss := replicaSets(t, c.Client, d)
	if rss["2"].Spec.MinReadySeconds != 2 {
		t.Errorf("new replicaset minReadySeconds %d", rss["2"].Spec.MinReadySeconds)
	}
	update(t, c.Client, "slowstart", func(d *appsv1.Deployment) { d.Spec.MinReadySeconds = 0 })
	testenv.Eventually(t, 10*time.Second, "minReadySeconds 0 on the current replicaset", func() (bool, error) {
		rs := replicaSets(t, c.Client, d)["2"]
		return rs.Spec.MinReadySeconds == 0, fmt.Errorf("minReadySeconds %d", rs.Spec.MinReadySeconds)
	}, fastPoll)
	if n := len(replicaSets(t, c.Client, d)); n != 2 {
		t.Errorf("a minReadySeconds change made a new replicaset: %d", n)
	}
}
