package statefulset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/kstep-dev/kstep/cluster/controller"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

var ssKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")

// Controller is the StatefulSet controller.
type Controller struct {
	client   kubernetes.Interface
	sets     *controller.WriteCache
	podIndex cache.Indexer
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
	exp      *controller.Expectations
	recorder record.EventRecorder
	log      *slog.Logger
	workers  int
}

var _ controller.Controller = &Controller{}

// New builds the StatefulSet controller on the context's informers.
func New(c *controller.Context) controller.Controller {
	inf := c.Informers.Apps().V1().StatefulSets().Informer()
	podInf := c.PodInformer()
	controller.MustIndex(podInf, controller.PodsByController)
	q := controller.NewOwnerQueue(c, "statefulset", ssKind, inf, podInf)
	s := &Controller{
		client:   c.Client,
		sets:     controller.NewWriteCache(inf, false),
		podIndex: podInf.GetIndexer(),
		synced:   []cache.InformerSynced{inf.HasSynced, podInf.HasSynced},
		queue:    q,
		exp:      q.Exp,
		recorder: c.Recorder,
		log:      c.Log.With("controller", "statefulset"),
		workers:  max(1, c.Options.Workers/4),
	}
	return s
}

// Name implements controller.Controller.
func (s *Controller) Name() string { return "statefulset" }

// Run syncs until ctx ends.
func (s *Controller) Run(ctx context.Context) {
	controller.RunWorkers(ctx, s.queue, s.workers, s.synced, s.sync, s.log)
}

// ordinal is the ordinal in a pod's name <set>-<n>, or -1.
func ordinal(set string, p *corev1.Pod) int {
	rest, ok := strings.CutPrefix(p.Name, set+"-")
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || strconv.Itoa(n) != rest {
		return -1
	}
	return n
}

func runningReady(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && controller.PodReady(p) && p.DeletionTimestamp == nil
}

func (s *Controller) sync(ctx context.Context, key string) error {
	obj, exists, err := s.sets.GetByKey(key)
	if err != nil {
		return err
	}
	if !exists {
		s.exp.Forget(key)
		return nil
	}
	set := obj.(*appsv1.StatefulSet)
	if set.DeletionTimestamp != nil {
		return nil
	}
	owned, err := s.podIndex.ByIndex(controller.PodsByController, string(set.UID))
	if err != nil {
		return err
	}
	start := 0
	if set.Spec.Ordinals != nil {
		start = int(set.Spec.Ordinals.Start)
	}
	end := start + int(ptr.Deref(set.Spec.Replicas, 1))
	pods := map[int]*corev1.Pod{}
	var condemned []*corev1.Pod // ordinals outside [start, end)
	for _, o := range owned {
		p, ok := o.(*corev1.Pod)
		if !ok || p.Namespace != set.Namespace {
			continue
		}
		n := ordinal(set.Name, p)
		switch {
		case n < 0:
		case n >= start && n < end:
			pods[n] = p
		default:
			condemned = append(condemned, p)
		}
	}
	sort.Slice(condemned, func(a, b int) bool { return ordinal(set.Name, condemned[a]) > ordinal(set.Name, condemned[b]) })
	update := controller.ComputeHash(&set.Spec.Template, nil)
	parallel := set.Spec.PodManagementPolicy == appsv1.ParallelPodManagement

	var errs []error
	if s.exp.Satisfied(key) {
		errs = append(errs, s.manage(ctx, key, set, pods, condemned, start, end, update, parallel))
	}

	st := appsv1.StatefulSetStatus{ObservedGeneration: set.Generation, CollisionCount: set.Status.CollisionCount,
		Conditions: set.Status.Conditions, UpdateRevision: update, CurrentRevision: set.Status.CurrentRevision}
	if st.CurrentRevision == "" {
		st.CurrentRevision = update
	}
	for _, p := range append(mapValues(pods), condemned...) {
		if p.DeletionTimestamp != nil {
			continue
		}
		st.Replicas++
		if runningReady(p) {
			st.ReadyReplicas++
			st.AvailableReplicas++
		}
		switch p.Labels[appsv1.ControllerRevisionHashLabelKey] {
		case update:
			st.UpdatedReplicas++
		case st.CurrentRevision:
			st.CurrentReplicas++
		}
	}
	if st.UpdatedReplicas == int32(end-start) && st.Replicas == st.UpdatedReplicas {
		st.CurrentRevision, st.CurrentReplicas = update, st.UpdatedReplicas
	} else if st.CurrentRevision == update {
		st.CurrentReplicas = st.UpdatedReplicas
	}
	if !apiequality.Semantic.DeepEqual(set.Status, st) {
		cp := set.DeepCopy()
		cp.Status = st
		got, err := s.client.AppsV1().StatefulSets(set.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
		switch {
		case err == nil:
			s.sets.Wrote(got)
		case !apierrors.IsNotFound(err):
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func mapValues(m map[int]*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	return out
}

// manage makes one round of progress: create the missing ordinals (all, or
// the lowest once the ones below are Ready), delete condemned pods (all,
// or the highest), then roll one outdated pod.
func (s *Controller) manage(ctx context.Context, key string, set *appsv1.StatefulSet, pods map[int]*corev1.Pod, condemned []*corev1.Pod,
	start, end int, update string, parallel bool) error {
	// Finished pods are replaced under their name.
	for n, p := range pods {
		if p.DeletionTimestamp == nil && (p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded) {
			delete(pods, n)
			return s.deletePods(ctx, []*corev1.Pod{p})
		}
	}
	var create []int
	for n := start; n < end; n++ {
		p, ok := pods[n]
		if !ok {
			create = append(create, n)
			if !parallel {
				break
			}
			continue
		}
		if !parallel && !runningReady(p) {
			return nil // OrderedReady: wait for it
		}
	}
	if len(create) > 0 {
		return s.createPods(ctx, key, set, create, update)
	}
	allReady := true
	for _, p := range pods {
		allReady = allReady && runningReady(p)
	}
	if len(condemned) > 0 {
		if parallel {
			return s.deletePods(ctx, condemned)
		}
		for _, p := range condemned {
			if p.DeletionTimestamp != nil || !allReady {
				return nil // one at a time, the rest Ready
			}
		}
		return s.deletePods(ctx, condemned[:1])
	}
	if set.Spec.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType || !allReady {
		return nil
	}
	partition := 0
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		partition = int(*ru.Partition)
	}
	for n := end - 1; n >= max(start, partition); n-- {
		if p := pods[n]; p.Labels[appsv1.ControllerRevisionHashLabelKey] != update {
			return s.deletePods(ctx, []*corev1.Pod{p})
		}
	}
	return nil
}

func (s *Controller) createPods(ctx context.Context, key string, set *appsv1.StatefulSet, ordinals []int, update string) error {
	s.exp.Expect(key, len(ordinals), 0)
	var wg sync.WaitGroup
	errs := make([]error, len(ordinals))
	for i, n := range ordinals {
		wg.Go(func() {
			var created bool
			if created, errs[i] = s.createPod(ctx, set, n, update); !created {
				s.exp.Observed(key, 1, 0) // will never show
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// createPod reports whether it created the pod.
func (s *Controller) createPod(ctx context.Context, set *appsv1.StatefulSet, n int, update string) (bool, error) {
	t := set.Spec.Template
	name := fmt.Sprintf("%s-%d", set.Name, n)
	l := make(map[string]string, len(t.Labels)+3)
	for k, v := range t.Labels {
		l[k] = v
	}
	l[appsv1.StatefulSetPodNameLabel] = name
	l[appsv1.PodIndexLabel] = strconv.Itoa(n)
	l[appsv1.ControllerRevisionHashLabelKey] = update
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: set.Namespace, Labels: l, Annotations: t.Annotations, Finalizers: t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: ssKind.GroupVersion().String(), Kind: ssKind.Kind,
				Name: set.Name, UID: set.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: *t.Spec.DeepCopy(),
	}
	pod.Spec.Hostname, pod.Spec.Subdomain = name, set.Spec.ServiceName
	_, err := s.client.CoreV1().Pods(set.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	switch {
	case err == nil:
		s.recorder.Eventf(set, corev1.EventTypeNormal, "SuccessfulCreate", "create Pod %s in StatefulSet %s successful", name, set.Name)
		return true, nil
	case apierrors.IsAlreadyExists(err):
		return false, nil // still terminating, or another's: its events sync again
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return false, nil
	}
	s.recorder.Eventf(set, corev1.EventTypeWarning, "FailedCreate", "create Pod %s in StatefulSet %s failed error: %v", name, set.Name, err)
	return false, err
}

func (s *Controller) deletePods(ctx context.Context, pods []*corev1.Pod) error {
	var errs []error
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		err := s.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
