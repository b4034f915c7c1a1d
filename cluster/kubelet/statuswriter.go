package kubelet

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"

	"github.com/kstep-dev/kstep/cluster/trace"
)

// statusWriter writes pods' statuses to the apiserver (step ⑧) off the pod
// workers' path: a worker sets the status it computed and goes on; writers
// patch the newest status of each pod, so statuses that change faster than
// they are written coalesce, and a status equal to what the apiserver has
// is never written.
//
// A provisional status (the "being created" one a sync sets before it asks
// the runtime for a sandbox) waits up to ProvisionalStatusDelay for the
// sync to set a newer one: a sync that finishes within it (a warm or hollow
// runtime) is written once, with its outcome, instead of twice in a row —
// the second write, the one that reports Ready, queued behind the first.
// A sync that takes longer (a real sandbox, an image pull) still reports
// the pod as being created, that much later. Nothing on the way to Ready
// waits: a status that is not provisional is written at once.
type statusWriter struct {
	k     *Kubelet
	queue workqueue.TypedDelayingInterface[types.UID]

	mu      sync.Mutex
	entries map[types.UID]*statusEntry
}

type statusEntry struct {
	namespace, name string
	want            corev1.PodStatus
	// written is the last status the apiserver acknowledged, at
	// writtenRV; it stands for the apiserver's copy while the informer's
	// is older.
	written   *corev1.PodStatus
	writtenRV string
	// readyStamped: pod.status.persisted was stamped (or the pod was Ready
	// before this kubelet wrote anything, so it is not stamped again).
	readyStamped bool
	failures     int
}

func newStatusWriter(k *Kubelet) *statusWriter {
	return &statusWriter{k: k, queue: workqueue.NewTypedDelayingQueue[types.UID](), entries: map[types.UID]*statusEntry{}}
}

// set records the status a pod should have and queues its write.
func (s *statusWriter) set(pod *corev1.Pod, st corev1.PodStatus) {
	s.record(pod, st)
	s.queue.Add(pod.UID)
}

// setProvisional records a status that the sync in progress is expected to
// replace, and queues its write after ProvisionalStatusDelay; a set before
// then writes the newer status at once, and the delayed write finds nothing
// left to write.
func (s *statusWriter) setProvisional(pod *corev1.Pod, st corev1.PodStatus) {
	s.record(pod, st)
	s.queue.AddAfter(pod.UID, s.k.cfg.ProvisionalStatusDelay)
}

func (s *statusWriter) record(pod *corev1.Pod, st corev1.PodStatus) {
	s.mu.Lock()
	e := s.entries[pod.UID]
	if e == nil {
		e = &statusEntry{namespace: pod.Namespace, name: pod.Name, readyStamped: isReady(&pod.Status)}
		s.entries[pod.UID] = e
	}
	e.want = st
	s.mu.Unlock()
}

// last is the newest status set for a pod, or nil.
func (s *statusWriter) last(uid types.UID) *corev1.PodStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.entries[uid]; e != nil {
		st := e.want
		return &st
	}
	return nil
}

// forget drops a pod that is gone.
func (s *statusWriter) forget(uid types.UID) {
	s.mu.Lock()
	delete(s.entries, uid)
	s.mu.Unlock()
}

func (s *statusWriter) shutdown() { s.queue.ShutDown() }

func (s *statusWriter) run(ctx context.Context) {
	for {
		uid, quit := s.queue.Get()
		if quit {
			return
		}
		retry := s.write(ctx, uid)
		s.queue.Done(uid)
		if retry > 0 && ctx.Err() == nil {
			s.queue.AddAfter(uid, retry)
		}
	}
}

// rvNewer reports whether resourceVersion a is newer than b. kstep's (and
// Kubernetes') resourceVersions are etcd revisions; anything unparsable
// counts as not newer, which only costs a redundant write.
func rvNewer(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x > y
}

// statusPatch is a JSON merge patch of the fields the kubelet owns. Lists
// are replaced whole, so the patch is right whatever version of the status
// it lands on; metadata.uid makes it fail on a pod that was replaced.
type statusPatch struct {
	Metadata struct {
		UID types.UID `json:"uid"`
	} `json:"metadata"`
	Status struct {
		Phase             corev1.PodPhase          `json:"phase"`
		Reason            string                   `json:"reason,omitempty"`
		Message           string                   `json:"message,omitempty"`
		Conditions        []corev1.PodCondition    `json:"conditions"`
		ContainerStatuses []corev1.ContainerStatus `json:"containerStatuses"`
		PodIP             string                   `json:"podIP,omitempty"`
		PodIPs            []corev1.PodIP           `json:"podIPs,omitempty"`
		HostIP            string                   `json:"hostIP,omitempty"`
		HostIPs           []corev1.HostIP          `json:"hostIPs,omitempty"`
		StartTime         *metav1.Time             `json:"startTime,omitempty"`
	} `json:"status"`
}

func (s *statusWriter) write(ctx context.Context, uid types.UID) time.Duration {
	s.mu.Lock()
	e := s.entries[uid]
	if e == nil {
		s.mu.Unlock()
		return 0
	}
	want, written, writtenRV, ns, name := e.want, e.written, e.writtenRV, e.namespace, e.name
	s.mu.Unlock()

	cached, err := s.k.pods.Pods(ns).Get(name)
	if err != nil || cached.UID != uid {
		return 0 // gone: nothing to report to
	}
	base := &cached.Status
	if written != nil && rvNewer(writtenRV, cached.ResourceVersion) {
		base = written
	}
	if ownedEqual(base, &want) {
		if base == &cached.Status {
			s.persistedUnanswered(uid, &want)
		}
		return 0
	}
	var p statusPatch
	p.Metadata.UID = uid
	p.Status.Phase, p.Status.Conditions, p.Status.ContainerStatuses = want.Phase, want.Conditions, want.ContainerStatuses
	p.Status.Reason, p.Status.Message = want.Reason, want.Message
	p.Status.PodIP, p.Status.PodIPs, p.Status.HostIP, p.Status.HostIPs = want.PodIP, want.PodIPs, want.HostIP, want.HostIPs
	p.Status.StartTime = want.StartTime
	body, err := json.Marshal(&p)
	if err != nil {
		s.k.log.Error("status patch", "pod", ns+"/"+name, "err", err)
		return 0
	}
	start := time.Now()
	out, err := s.k.client.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{}, "status")
	statusWriteDuration.Observe(time.Since(start).Seconds())
	s.mu.Lock()
	defer s.mu.Unlock()
	e = s.entries[uid]
	if e == nil {
		return 0
	}
	if err != nil {
		if apierrors.IsNotFound(err) || ctx.Err() != nil {
			return 0
		}
		e.failures++
		statusWriteErrors.Inc()
		s.k.log.Warn("status write failed", "pod", ns+"/"+name, "err", err)
		return min(time.Duration(e.failures)*200*time.Millisecond, 5*time.Second)
	}
	e.failures = 0
	e.written, e.writtenRV = &want, out.ResourceVersion
	if !e.readyStamped && isReady(&want) {
		e.readyStamped = true
		s.k.tracer.Emit(trace.PodStatusPersisted, "Pod", ns, name, uid)
	}
	return 0 // a set during the write re-queued the pod already
}

// persistedUnanswered stamps pod.status.persisted for a Ready status the
// informer shows persisted after this kubelet's write of it failed without
// an answer (a connection closed under it, a timeout): the write landed,
// and its reply was lost. The stamp is when the kubelet learnt it, so step
// ⑧ counts the lost reply and the retry; without it the pod would lack the
// step and the run be invalid.
func (s *statusWriter) persistedUnanswered(uid types.UID, want *corev1.PodStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[uid]
	if e == nil || e.failures == 0 || e.readyStamped || !isReady(want) {
		return
	}
	e.failures, e.readyStamped = 0, true
	s.k.tracer.Emit(trace.PodStatusPersisted, "Pod", e.namespace, e.name, uid)
}

// ownedEqual compares the fields the kubelet writes.
func ownedEqual(a, b *corev1.PodStatus) bool {
	// The kubelet sets reason and message only when it rejects a pod: b
	// without them leaves a's alone (the patch omits them).
	return a.Phase == b.Phase && a.PodIP == b.PodIP && a.HostIP == b.HostIP &&
		(b.Reason == "" || a.Reason == b.Reason) && (b.Message == "" || a.Message == b.Message) &&
		equality.Semantic.DeepEqual(a.Conditions, b.Conditions) &&
		equality.Semantic.DeepEqual(a.ContainerStatuses, b.ContainerStatuses) &&
		equality.Semantic.DeepEqual(a.PodIPs, b.PodIPs) &&
		equality.Semantic.DeepEqual(a.HostIPs, b.HostIPs) &&
		equality.Semantic.DeepEqual(a.StartTime, b.StartTime)
}
