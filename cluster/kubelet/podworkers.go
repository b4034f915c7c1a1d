package kubelet

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kstep-dev/kstep/cluster/trace"
)

// newPodInformer watches the pods bound to node, and only those: the
// apiserver filters by spec.nodeName, so a node's watch carries its own
// pods (step ⑥).
func newPodInformer(client kubernetes.Interface, node string) cache.SharedIndexInformer {
	return v1.NewFilteredPodInformer(client, metav1.NamespaceAll, 0, cache.Indexers{},
		func(o *metav1.ListOptions) { o.FieldSelector = "spec.nodeName=" + node })
}

// podEvent turns an informer event into a signal to the pod's worker.
func (k *Kubelet) podEvent(o any, added bool) {
	if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	pod, ok := o.(*corev1.Pod)
	if !ok {
		return
	}
	// Stamp the first sight of a pod no kubelet has started yet: a kubelet
	// that restarts re-lists its running pods and must not stamp them again.
	if added && pod.Status.StartTime == nil && pod.DeletionTimestamp == nil {
		k.tracer.Emit(trace.PodObservedKubelet, "Pod", pod.Namespace, pod.Name, pod.UID)
	}
	k.dispatch(pod.UID, pod.Namespace+"/"+pod.Name)
}

// podChanged is the probe manager's and the status writer's way to wake a
// pod's worker.
func (k *Kubelet) podChanged(uid types.UID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if w := k.workers[uid]; w != nil {
		w.wake()
	}
}

// podWorker serializes everything done to one pod: a goroutine that syncs
// the pod whenever it is woken (an informer event, a runtime change seen by
// the relist, a probe result) or its retry timer fires. Two syncs of one
// pod never run at once; wakes during a sync coalesce into one more sync.
type podWorker struct {
	uid    types.UID
	key    string // namespace/name
	signal chan struct{}
	done   chan struct{}

	// Owned by the worker goroutine.
	lastPod   *corev1.Pod             // the last spec seen: a force-deleted pod is killed with its grace period
	waiting   map[string]waitingState // per container: why it is not running
	podError  string                  // sandbox failure, shown on every waiting container
	cache     runtimeCache
	retries   int             // consecutive failed syncs
	stamped   stepMarks       // steps already traced
	pulled    map[string]bool // containers whose image this kubelet made present
	started   map[string]bool // containers this kubelet started
	startedAt time.Time       // first sync: the pod's startTime
	rejected  bool            // admission refused it: it never runs

	// Guarded by Kubelet.mu (admission reads every worker's).
	admitted  bool                   // admission passed
	hostPorts []corev1.ContainerPort // the host ports it holds while admitted and not finished
}

// stepMarks records which of ⑦'s steps this kubelet has stamped for a pod.
type stepMarks struct {
	sandbox, pulled, started, ready bool
}

func (w *podWorker) wake() {
	select {
	case w.signal <- struct{}{}:
	default:
	}
}

// dispatch wakes the worker of uid, starting one if needed. key is the pod's
// namespace/name, from the informer or from the runtime's labels.
func (k *Kubelet) dispatch(uid types.UID, key string) {
	k.mu.Lock()
	w := k.workers[uid]
	if w == nil {
		if k.ctx == nil || k.ctx.Err() != nil {
			k.mu.Unlock()
			return
		}
		w = &podWorker{uid: uid, key: key, signal: make(chan struct{}, 1), done: make(chan struct{}),
			waiting: map[string]waitingState{}}
		k.workers[uid] = w
		go k.runWorker(k.ctx, w)
	}
	// Woken under the lock, so retire sees the signal and keeps the worker.
	w.wake()
	k.mu.Unlock()
}

// runWorker is a pod worker's loop.
func (k *Kubelet) runWorker(ctx context.Context, w *podWorker) {
	defer close(w.done)
	var timer <-chan time.Time
	var t interface{ Stop() bool }
	for {
		select {
		case <-ctx.Done():
			if t != nil {
				t.Stop()
			}
			return
		case <-w.signal:
		case <-timer:
		}
		if t != nil {
			t.Stop()
			t, timer = nil, nil
		}
		pod := k.currentPod(w)
		start := time.Now()
		retry, finished := k.syncPod(ctx, w, pod)
		syncDuration.Observe(time.Since(start).Seconds())
		if ctx.Err() != nil {
			return
		}
		if finished && k.retire(w) {
			return
		}
		if retry > 0 {
			ct := k.clock.NewTimer(retry)
			t, timer = ct, ct.C()
		}
	}
}

// retire removes a finished worker unless it was woken meanwhile, in which
// case it syncs once more.
func (k *Kubelet) retire(w *podWorker) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(w.signal) > 0 {
		return false
	}
	delete(k.workers, w.uid)
	k.probes.RemovePod(w.uid)
	k.status.forget(w.uid)
	return true
}

// currentPod is the informer's pod for the worker, or nil when it is gone
// (or replaced by a pod of the same name with another UID).
func (k *Kubelet) currentPod(w *podWorker) *corev1.Pod {
	if w.key == "" || k.podInformer == nil {
		return nil
	}
	o, ok, err := k.podInformer.GetIndexer().GetByKey(w.key)
	if err != nil || !ok {
		return nil
	}
	p := o.(*corev1.Pod)
	if p.UID != w.uid {
		return nil
	}
	return p
}

// waitWorkers waits for every pod worker to return after ctx ended.
func (k *Kubelet) waitWorkers() {
	k.mu.Lock()
	ws := make([]*podWorker, 0, len(k.workers))
	for _, w := range k.workers {
		ws = append(ws, w)
	}
	k.mu.Unlock()
	for _, w := range ws {
		<-w.done
	}
}

// Workers is how many pod workers run now.
func (k *Kubelet) Workers() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.workers)
}
