package daemonset

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// burst caps the pods one sync creates; the rest wait for the next sync.
const burst = 500

var dsKind = appsv1.SchemeGroupVersion.WithKind("DaemonSet")

// Controller is the DaemonSet controller.
type Controller struct {
	client   kubernetes.Interface
	dss      *controller.WriteCache
	dsInf    cache.SharedIndexInformer
	nodes    corelisters.NodeLister
	podIndex cache.Indexer
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
	exp      *controller.Expectations
	recorder record.EventRecorder
	log      *slog.Logger
	now      func() time.Time
	workers  int
}

var _ controller.Controller = &Controller{}

// New builds the DaemonSet controller on the context's informers.
func New(c *controller.Context) controller.Controller {
	dsInf := c.Informers.Apps().V1().DaemonSets().Informer()
	nodeInf := c.Informers.Core().V1().Nodes().Informer()
	podInf := c.PodInformer()
	controller.MustIndex(podInf, controller.PodsByController)
	q := controller.NewOwnerQueue(c, "daemonset", dsKind, dsInf, podInf)
	d := &Controller{
		client:   c.Client,
		dss:      controller.NewWriteCache(dsInf, false),
		dsInf:    dsInf,
		nodes:    corelisters.NewNodeLister(nodeInf.GetIndexer()),
		podIndex: podInf.GetIndexer(),
		synced:   []cache.InformerSynced{dsInf.HasSynced, nodeInf.HasSynced, podInf.HasSynced},
		queue:    q,
		exp:      q.Exp,
		recorder: c.Recorder,
		log:      c.Log.With("controller", "daemonset"),
		now:      c.Now,
		workers:  max(1, c.Options.Workers/4),
	}
	// Any node change may change where every DaemonSet should run.
	_, _ = nodeInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { d.enqueueAll() },
		UpdateFunc: func(old, cur any) {
			o, c := old.(*corev1.Node), cur.(*corev1.Node)
			if !labels.Equals(o.Labels, c.Labels) || !apiequality.Semantic.DeepEqual(o.Spec.Taints, c.Spec.Taints) {
				d.enqueueAll()
			}
		},
		DeleteFunc: func(any) { d.enqueueAll() },
	})
	return d
}

// Name implements controller.Controller.
func (d *Controller) Name() string { return "daemonset" }

// Run syncs until ctx ends.
func (d *Controller) Run(ctx context.Context) {
	controller.RunWorkers(ctx, d.queue, d.workers, d.synced, d.sync, d.log)
}

func (d *Controller) enqueueAll() {
	for _, key := range d.dsInf.GetStore().ListKeys() {
		d.queue.Add(key)
	}
}

// daemonTolerations are upstream's, added to every daemon pod: it stays
// through the conditions that evict other pods and lands on cordoned
// nodes.
var daemonTolerations = []corev1.Toleration{
	{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeDiskPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodePIDPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
}

func withDaemonTolerations(ts []corev1.Toleration) []corev1.Toleration {
	out := append([]corev1.Toleration(nil), ts...)
	for _, t := range daemonTolerations {
		found := false
		for _, have := range ts {
			if have.Key == t.Key && have.Effect == t.Effect && have.Operator == t.Operator {
				found = true
				break
			}
		}
		if !found {
			out = append(out, t)
		}
	}
	return out
}

// shouldRun reports whether the DaemonSet's pod belongs on node.
func shouldRun(ds *appsv1.DaemonSet, node *corev1.Node) bool {
	spec := &ds.Spec.Template.Spec
	if ok, err := nodeaffinity.NewRequiredNodeAffinity(spec.NodeSelector, spec.Affinity).Match(node); !ok || err != nil {
		return false
	}
	_, untolerated := v1helper.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, withDaemonTolerations(spec.Tolerations), func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, false)
	return !untolerated
}

// podNode is the node a daemon pod is for: its nodeName, else the node its
// affinity pins it to.
func podNode(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, f := range t.MatchFields {
				if f.Key == metav1.ObjectNameField && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
					return f.Values[0]
				}
			}
		}
	}
	return ""
}

// pinTo is upstream's ReplaceDaemonSetPodNodeNameNodeAffinity: the pod's
// required node affinity becomes exactly "metadata.name in (node)"; its
// preferred terms stay.
func pinTo(a *corev1.Affinity, node string) *corev1.Affinity {
	out := &corev1.Affinity{}
	if a != nil {
		out = a.DeepCopy()
	}
	if out.NodeAffinity == nil {
		out.NodeAffinity = &corev1.NodeAffinity{}
	}
	out.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchFields: []corev1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
	}}}
	return out
}

func (d *Controller) sync(ctx context.Context, key string) error {
	obj, exists, err := d.dss.GetByKey(key)
	if err != nil {
		return err
	}
	if !exists {
		d.exp.Forget(key)
		return nil
	}
	ds := obj.(*appsv1.DaemonSet)
	if ds.DeletionTimestamp != nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil || sel.Empty() {
		return nil // validation refuses these
	}
	satisfied := d.exp.Satisfied(key)
	nodes, err := d.nodes.List(labels.Everything())
	if err != nil {
		return err
	}
	owned, err := d.podIndex.ByIndex(controller.PodsByController, string(ds.UID))
	if err != nil {
		return err
	}
	byNode := map[string][]*corev1.Pod{}
	var failed []*corev1.Pod
	for _, o := range owned {
		p, ok := o.(*corev1.Pod)
		if !ok || p.Namespace != ds.Namespace || p.DeletionTimestamp != nil {
			continue
		}
		if p.Status.Phase == corev1.PodFailed {
			failed = append(failed, p)
			continue
		}
		byNode[podNode(p)] = append(byNode[podNode(p)], p)
	}
	hash := controller.ComputeHash(&ds.Spec.Template, nil)
	now := d.now()

	var create []string
	var del []*corev1.Pod
	del = append(del, failed...)
	st := appsv1.DaemonSetStatus{ObservedGeneration: ds.Generation, CollisionCount: ds.Status.CollisionCount, Conditions: ds.Status.Conditions}
	var old []*corev1.Pod // current pods of an older template
	unavailable := 0
	for _, n := range nodes {
		pods := byNode[n.Name]
		delete(byNode, n.Name)
		if !shouldRun(ds, n) {
			if len(pods) > 0 {
				st.NumberMisscheduled++
				del = append(del, pods...)
			}
			continue
		}
		st.DesiredNumberScheduled++
		if len(pods) == 0 {
			create = append(create, n.Name)
			unavailable++
			continue
		}
		sort.SliceStable(pods, func(a, b int) bool { return pods[a].CreationTimestamp.Before(&pods[b].CreationTimestamp) })
		del = append(del, pods[1:]...)
		p := pods[0]
		st.CurrentNumberScheduled++
		if p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] == hash {
			st.UpdatedNumberScheduled++
		} else {
			old = append(old, p)
		}
		if controller.PodReady(p) {
			st.NumberReady++
			if controller.PodAvailable(p, ds.Spec.MinReadySeconds, now) {
				st.NumberAvailable++
				continue
			}
		}
		unavailable++
	}
	for _, pods := range byNode { // pods for nodes that are gone
		del = append(del, pods...)
	}
	st.NumberUnavailable = st.DesiredNumberScheduled - st.NumberAvailable

	var errs []error
	if satisfied {
		if ds.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
			del = append(del, d.rollingVictims(ds, old, unavailable)...)
		}
		errs = append(errs, d.createPods(ctx, key, ds, hash, create[:min(len(create), burst)]))
		errs = append(errs, d.deletePods(ctx, del))
	}
	if !apiequality.Semantic.DeepEqual(ds.Status, st) {
		cp := ds.DeepCopy()
		cp.Status = st
		got, err := d.client.AppsV1().DaemonSets(ds.Namespace).UpdateStatus(ctx, cp, metav1.UpdateOptions{})
		switch {
		case err == nil:
			d.dss.Wrote(got)
		case !apierrors.IsNotFound(err):
			errs = append(errs, err)
		}
	}
	if ds.Spec.MinReadySeconds > 0 && st.NumberReady != st.NumberAvailable {
		d.queue.AddAfter(key, time.Duration(ds.Spec.MinReadySeconds)*time.Second)
	}
	return errors.Join(errs...)
}

// rollingVictims are the old pods a rolling update deletes now: as many
// as maxUnavailable leaves room for, unavailable old pods first.
func (d *Controller) rollingVictims(ds *appsv1.DaemonSet, old []*corev1.Pod, unavailable int) []*corev1.Pod {
	maxUnavailable := 1
	if ru := ds.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
		desired := 0
		if v, err := intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, int(ds.Status.DesiredNumberScheduled), true); err == nil {
			desired = v
		}
		maxUnavailable = max(desired, 1)
	}
	var out []*corev1.Pod
	budget := maxUnavailable - unavailable
	for _, p := range old {
		if !controller.PodReady(p) {
			out = append(out, p) // already unavailable: costs nothing
		}
	}
	for _, p := range old {
		if budget <= 0 {
			break
		}
		if controller.PodReady(p) {
			out = append(out, p)
			budget--
		}
	}
	return out
}

func (d *Controller) createPods(ctx context.Context, key string, ds *appsv1.DaemonSet, hash string, nodes []string) error {
	if len(nodes) == 0 {
		return nil
	}
	d.exp.Expect(key, len(nodes), 0)
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	errs := make([]error, len(nodes))
	for i, n := range nodes {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if errs[i] = d.createPod(ctx, ds, hash, n); errs[i] != nil {
				d.exp.Observed(key, 1, 0)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (d *Controller) createPod(ctx context.Context, ds *appsv1.DaemonSet, hash, node string) error {
	t := ds.Spec.Template
	l := make(map[string]string, len(t.Labels)+1)
	for k, v := range t.Labels {
		l[k] = v
	}
	l[appsv1.DefaultDaemonSetUniqueLabelKey] = hash
	prefix := ds.Name + "-"
	if len(prefix) > validation.DNS1123LabelMaxLength-5 {
		prefix = prefix[:validation.DNS1123LabelMaxLength-5]
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: prefix + utilrand.String(5), Namespace: ds.Namespace, Labels: l, Annotations: t.Annotations, Finalizers: t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: dsKind.GroupVersion().String(), Kind: dsKind.Kind,
				Name: ds.Name, UID: ds.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: *t.Spec.DeepCopy(),
	}
	pod.Spec.Affinity = pinTo(pod.Spec.Affinity, node)
	pod.Spec.Tolerations = withDaemonTolerations(pod.Spec.Tolerations)
	_, err := d.client.CoreV1().Pods(ds.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil
		}
		d.recorder.Eventf(ds, corev1.EventTypeWarning, "FailedCreate", "Error creating: %v", err)
		return err
	}
	d.recorder.Eventf(ds, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: %v", pod.Name)
	return nil
}

func (d *Controller) deletePods(ctx context.Context, pods []*corev1.Pod) error {
	var wg sync.WaitGroup
	errs := make([]error, len(pods))
	for i, p := range pods {
		wg.Go(func() {
			err := d.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				errs[i] = err
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
