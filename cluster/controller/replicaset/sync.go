package replicaset

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller"
	"github.com/kstep-dev/kstep/cluster/trace"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// sync reconciles one owner, seen as a ReplicaSet.
func (r *Controller) sync(ctx context.Context, key string) error {
	ns, _, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	obj, exists, err := r.written.GetByKey(key)
	if err != nil {
		return err
	}
	if !exists {
		r.exp.Forget(key)
		r.dels.forget(key)
		return nil
	}
	rs := r.owners.ReplicaSet(obj)
	sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil || sel.Empty() {
		return nil // validation refuses these; nothing sane to do
	}
	// Expectations are checked before the pods are read: a create seen
	// between the two reads is then counted, never missed.
	needsSync := (r.noExpectations || r.exp.Satisfied(key)) && rs.DeletionTimestamp == nil

	all, err := r.candidates(ns, rs)
	if err != nil {
		return err
	}
	pods, err := r.claim(ctx, rs, sel, all)
	if err != nil {
		return err
	}
	active := filterActive(pods)

	var manageErr error
	if needsSync {
		manageErr = r.manage(ctx, rs, key, active)
	}
	// manage created or deleted pods when active was off the count.
	acted := needsSync && len(active) != int(ptr.Deref(rs.Spec.Replicas, 1))
	if manageErr == nil && !r.noExpectations && (acted || !r.exp.Satisfied(key)) {
		// Pods it created or deleted are not in what it just counted, and
		// their arrival in its cache syncs this ReplicaSet again. A status
		// written now would be stale and rewritten within milliseconds.
		return nil
	}
	st := computeStatus(rs, pods, active, manageErr, r.now())
	if err := r.updateStatus(ctx, rs, st); err != nil {
		return err
	}
	if manageErr == nil && rs.Spec.MinReadySeconds > 0 && st.ReadyReplicas != st.AvailableReplicas {
		// Pods become available by the clock alone: look again then.
		r.queue.AddAfter(key, time.Duration(rs.Spec.MinReadySeconds)*time.Second)
	}
	return manageErr
}

// candidates are the pods claim must look at: those rs controls and the
// namespace's orphans (pods controlled by anything else are never rs's).
func (r *Controller) candidates(ns string, rs *appsv1.ReplicaSet) ([]*corev1.Pod, error) {
	owned, err := r.podIndex.ByIndex(controller.PodsByController, string(rs.UID))
	if err != nil {
		return nil, err
	}
	orphans, err := r.podIndex.ByIndex(controller.PodsByController, controller.OrphansIn(ns))
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.Pod, 0, len(owned)+len(orphans))
	for _, o := range append(owned, orphans...) {
		if p, ok := o.(*corev1.Pod); ok && p.Namespace == ns {
			out = append(out, p)
		}
	}
	return out, nil
}

// filterActive drops pods that no longer count: finished, or being deleted.
func filterActive(pods []*corev1.Pod) []*corev1.Pod {
	out := pods[:0:0]
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	return out
}

// claim returns the pods rs controls, adopting orphans that match its
// selector and releasing owned pods that no longer do.
func (r *Controller) claim(ctx context.Context, rs *appsv1.ReplicaSet, sel labels.Selector, all []*corev1.Pod) ([]*corev1.Pod, error) {
	var owned []*corev1.Pod
	var errs []error
	fresh := false
	for _, p := range all {
		ref := metav1.GetControllerOf(p)
		matches := sel.Matches(labels.Set(p.Labels))
		switch {
		case ref != nil && ref.UID == rs.UID:
			if matches {
				owned = append(owned, p)
				continue
			}
			if p.DeletionTimestamp == nil {
				errs = append(errs, r.release(ctx, rs, p))
			}
		case ref == nil && matches && p.DeletionTimestamp == nil && rs.DeletionTimestamp == nil:
			// Adopt only for a ReplicaSet that is still the one we think:
			// a quorum read, once per sync.
			if !fresh {
				cur, err := r.owners.Get(ctx, rs.Namespace, rs.Name)
				if err != nil || cur.GetUID() != rs.UID || cur.GetDeletionTimestamp() != nil {
					return owned, err
				}
				fresh = true
			}
			if err := r.adopt(ctx, rs, p); err != nil {
				if !apierrors.IsNotFound(err) {
					errs = append(errs, err)
				}
				continue
			}
			owned = append(owned, p)
		}
	}
	return owned, errors.Join(errs...)
}

func (r *Controller) ownerRef(rs *appsv1.ReplicaSet) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: r.ownerAPIVersion, Kind: r.ownerKind, Name: rs.Name, UID: rs.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
}

func (r *Controller) adopt(ctx context.Context, rs *appsv1.ReplicaSet, p *corev1.Pod) error {
	// metadata.uid in the patch makes it a precondition: a pod of the same
	// name recreated in between is not adopted.
	patch := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":%q,"kind":%q,"name":%q,"uid":%q,"controller":true,"blockOwnerDeletion":true}],"uid":%q}}`,
		r.ownerAPIVersion, r.ownerKind, rs.Name, rs.UID, p.UID)
	_, err := r.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

func (r *Controller) release(ctx context.Context, rs *appsv1.ReplicaSet, p *corev1.Pod) error {
	patch := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"$patch":"delete","uid":%q}],"uid":%q}}`, rs.UID, p.UID)
	_, err := r.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		return nil // gone, or no longer ours
	}
	return err
}

// manage creates or deletes pods so that active matches spec.replicas.
func (r *Controller) manage(ctx context.Context, rs *appsv1.ReplicaSet, key string, active []*corev1.Pod) error {
	want := int(ptr.Deref(rs.Spec.Replicas, 1))
	diff := len(active) - want
	switch {
	case diff < 0:
		n := min(-diff, BurstReplicas)
		r.exp.Expect(key, n, 0)
		created, err := slowStart(n, 1, func() error { return r.createPod(ctx, rs) })
		if skipped := n - created; skipped > 0 {
			// Creates that failed or were never sent will not show in the
			// watch: stop expecting them.
			r.exp.Observed(key, skipped, 0)
		}
		return err
	case diff > 0:
		n := min(diff, BurstReplicas)
		victims := pickVictims(active, n)
		uids := make([]string, len(victims))
		for i, p := range victims {
			uids[i] = string(p.UID)
		}
		r.dels.expect(key, uids)
		r.exp.Expect(key, 0, n)
		var wg sync.WaitGroup
		errs := make([]error, len(victims))
		for i, p := range victims {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := r.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
				if err != nil {
					if r.dels.observe(key, string(p.UID)) {
						r.exp.Observed(key, 0, 1)
					}
					if !apierrors.IsNotFound(err) {
						errs[i] = err
					}
				}
			}()
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	return nil
}

// slowStart calls fn n times in batches of 1, 2, 4, ... in parallel within
// a batch, and stops after a batch with a failure. It returns how many
// calls succeeded.
func slowStart(n, initial int, fn func() error) (int, error) {
	done := 0
	for batch := min(n, initial); done < n; batch = min(2*batch, n-done) {
		var wg sync.WaitGroup
		errs := make([]error, batch)
		for i := range batch {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = fn()
			}()
		}
		wg.Wait()
		ok := 0
		for _, e := range errs {
			if e == nil {
				ok++
			}
		}
		done += ok
		if err := errors.Join(errs...); err != nil {
			return done, err
		}
	}
	return done, nil
}

// createPod creates one pod under a name chosen here rather than by the
// apiserver (generateName), so that a create whose answer was lost can be
// settled. A timeout, a 5xx or a broken connection — an etcd leader lost
// mid-proposal, an apiserver killed mid-request — leaves the write landed
// or not; the same create is sent again until the answer is definite, and
// AlreadyExists for a pod this ReplicaSet controls means the first one
// landed. Counting such an error as "not created", as upstream does, lets
// the next sync create a second pod for the same slot (the chaos smoke
// suite caught it: 2 pods over replicas after an etcd leader kill).
func (r *Controller) createPod(ctx context.Context, rs *appsv1.ReplicaSet) error {
	t := rs.Spec.Template
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            podName(rs.Name),
			Namespace:       rs.Namespace,
			Labels:          t.Labels,
			Annotations:     t.Annotations,
			Finalizers:      t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{r.ownerRef(rs)},
		},
		Spec: *t.Spec.DeepCopy(),
	}
	sent := time.Now()
	created, err := r.createSettled(ctx, rs, pod)
	if err != nil {
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil // the namespace is going; so is the ReplicaSet
		}
		// Any other refusal (a ResourceQuota's 403 among them) is a
		// failure the status says: ReplicaFailure, FailedCreate.
		r.recorder.Eventf(r.owners.EventObject(rs), corev1.EventTypeWarning, "FailedCreate", "Error creating: %v", err)
		return err
	}
	// The pod's UID exists only now; the stamp carries the time it was sent.
	r.tracer.EmitAt(sent, trace.PodCreateSent, "Pod", created.Namespace, created.Name, created.UID)
	r.recorder.Eventf(r.owners.EventObject(rs), corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: %v", created.Name)
	return nil
}

// settleWithin bounds how long one create is retried for a definite answer:
// longer than an etcd election or an apiserver restart, and than etcd's own
// request timeout during a quorum loss.
const settleWithin = time.Minute

// createSettled sends the create until the answer is definite (see
// createPod). An answer still unknown after settleWithin is returned as the
// error it is.
func (r *Controller) createSettled(ctx context.Context, rs *appsv1.ReplicaSet, pod *corev1.Pod) (*corev1.Pod, error) {
	pods := r.client.CoreV1().Pods(pod.Namespace)
	deadline := time.Now().Add(settleWithin)
	backoff := 100 * time.Millisecond
	for attempt := 0; ; attempt++ {
		created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
		switch {
		case err == nil:
			return created, nil
		case apierrors.IsAlreadyExists(err) && attempt > 0:
			// Ours if this ReplicaSet controls it: an earlier attempt landed.
			got, gerr := pods.Get(ctx, pod.Name, metav1.GetOptions{})
			if gerr == nil && metav1.IsControlledBy(got, rs) {
				return got, nil
			}
			if gerr != nil && ambiguous(gerr) && time.Now().Before(deadline) {
				break // could not tell yet: ask again
			}
			return nil, err
		case !ambiguous(err) || ctx.Err() != nil || time.Now().After(deadline):
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// ambiguous reports whether a write that returned err may have landed: any
// error that is not the apiserver's definite refusal (a 4xx other than 429).
func ambiguous(err error) bool {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return true // the connection broke: the request may have been served
	}
	code := st.Status().Code
	return code >= 500 || code == http.StatusTooManyRequests || code == 0
}

// podName is what generateName would give: the ReplicaSet's name, a dash
// and five random characters, the prefix cut to leave room for them.
func podName(rs string) string {
	const maxPrefix = validation.DNS1123LabelMaxLength - 5
	prefix := rs + "-"
	if len(prefix) > maxPrefix {
		prefix = prefix[:maxPrefix]
	}
	return prefix + utilrand.String(5)
}

// pickVictims orders pods the way upstream does for scale-down and returns
// the first n: unassigned before assigned, Pending before Unknown before
// Running, not ready before ready, more restarts before fewer, newer before
// older.
func pickVictims(pods []*corev1.Pod, n int) []*corev1.Pod {
	ps := append([]*corev1.Pod(nil), pods...)
	sort.SliceStable(ps, func(i, j int) bool { return deleteFirst(ps[i], ps[j]) })
	return ps[:min(n, len(ps))]
}

var phaseRank = map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}

func deleteFirst(a, b *corev1.Pod) bool {
	if (a.Spec.NodeName == "") != (b.Spec.NodeName == "") {
		return a.Spec.NodeName == ""
	}
	if phaseRank[a.Status.Phase] != phaseRank[b.Status.Phase] {
		return phaseRank[a.Status.Phase] < phaseRank[b.Status.Phase]
	}
	if controller.PodReady(a) != controller.PodReady(b) {
		return !controller.PodReady(a)
	}
	if ra, rb := restarts(a), restarts(b); ra != rb {
		return ra > rb
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return b.CreationTimestamp.Before(&a.CreationTimestamp)
	}
	return a.Name > b.Name
}

func restarts(p *corev1.Pod) int32 {
	var n int32
	for _, c := range p.Status.ContainerStatuses {
		n += c.RestartCount
	}
	return n
}

// computeStatus derives the status from the pods: a pure function.
func computeStatus(rs *appsv1.ReplicaSet, owned, active []*corev1.Pod, manageErr error, now time.Time) appsv1.ReplicaSetStatus {
	st := appsv1.ReplicaSetStatus{ObservedGeneration: rs.Generation, Conditions: rs.Status.Conditions}
	templateLabels := labels.SelectorFromSet(rs.Spec.Template.Labels)
	for _, p := range active {
		st.Replicas++
		if templateLabels.Matches(labels.Set(p.Labels)) {
			st.FullyLabeledReplicas++
		}
		if controller.PodReady(p) {
			st.ReadyReplicas++
			if controller.PodAvailable(p, rs.Spec.MinReadySeconds, now) {
				st.AvailableReplicas++
			}
		}
	}
	for _, p := range owned {
		if p.DeletionTimestamp != nil {
			st.TerminatingReplicas = ptr.To(ptr.Deref(st.TerminatingReplicas, 0) + 1)
		}
	}
	st.Conditions = setFailure(st.Conditions, manageErr, now)
	return st
}

func setFailure(conds []appsv1.ReplicaSetCondition, err error, now time.Time) []appsv1.ReplicaSetCondition {
	var out []appsv1.ReplicaSetCondition
	for _, c := range conds {
		if c.Type != appsv1.ReplicaSetReplicaFailure {
			out = append(out, c)
		}
	}
	if err != nil {
		out = append(out, appsv1.ReplicaSetCondition{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue,
			Reason: "FailedCreate", Message: err.Error(), LastTransitionTime: metav1.NewTime(now)})
	}
	return out
}

func (r *Controller) updateStatus(ctx context.Context, rs *appsv1.ReplicaSet, st appsv1.ReplicaSetStatus) error {
	if apiequality.Semantic.DeepEqual(rs.Status, st) {
		return nil
	}
	got, err := r.owners.UpdateStatus(ctx, rs, st)
	switch {
	case err == nil && got != nil:
		r.written.Wrote(got)
	case apierrors.IsNotFound(err):
		return nil // deleted: the informer's delete ends it
	}
	return err
}

// deletions tracks, per ReplicaSet, the UIDs of pods it deleted and has not
// seen go: a pod's delete is observed once whether the watch shows its
// deletionTimestamp, its removal, or both.
type deletions struct {
	mu sync.Mutex
	m  map[string]map[string]bool
}

func newDeletions() *deletions { return &deletions{m: map[string]map[string]bool{}} }

func (d *deletions) expect(key string, uids []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	set := d.m[key]
	if set == nil {
		set = map[string]bool{}
		d.m[key] = set
	}
	for _, u := range uids {
		set[u] = true
	}
}

// observe reports whether uid was an expected deletion, forgetting it.
func (d *deletions) observe(key, uid string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m[key][uid] {
		delete(d.m[key], uid)
		return true
	}
	return false
}

func (d *deletions) forget(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.m, key)
}
