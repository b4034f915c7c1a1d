package queue

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
)

// Defaults, as upstream's (the unschedulable timeout is kstep's: upstream
// waits 5 minutes).
const (
	DefaultInitialBackoff       = time.Second
	DefaultMaxBackoff           = 10 * time.Second
	DefaultUnschedulableTimeout = 30 * time.Second
	// flushPeriod is how often Run looks for pods that overstayed in the
	// unschedulable pool.
	flushPeriod = time.Second
	// maxRecordedEvents bounds the events kept for one cycle.
	maxRecordedEvents = 1024
)

// QueuedPodInfo is a pod in the queue with its scheduling history.
type QueuedPodInfo struct {
	*framework.PodInfo
	// Timestamp is when the pod last entered the queue: it orders activeQ
	// and is where backoff counts from.
	Timestamp time.Time
	// FirstSeen is when the queue first got the pod: the start of its
	// end-to-end scheduling latency.
	FirstSeen time.Time
	// Attempts counts the cycles the pod went through.
	Attempts int
	// Cycle is the scheduling cycle of the pod's latest Pop.
	Cycle int64
	// UnschedulablePlugins rejected the pod in its latest cycle.
	UnschedulablePlugins map[string]bool

	key string
	seq uint64
}

// Key is namespace/name.
func Key(pod *corev1.Pod) string { return pod.Namespace + "/" + pod.Name }

type inFlight struct {
	uid types.UID
	// pod is the latest object seen while in flight.
	pod     *corev1.Pod
	updated bool // spec or metadata changed while in flight
	deleted bool
}

type recordedEvent struct {
	cycle int64
	ev    framework.ClusterEvent
}

// Option configures a PriorityQueue.
type Option func(*PriorityQueue)

// WithBackoff sets the initial and maximum backoff.
func WithBackoff(initial, maxBackoff time.Duration) Option {
	return func(q *PriorityQueue) { q.initialBackoff, q.maxBackoff = initial, maxBackoff }
}

// WithUnschedulableTimeout sets how long a pod stays in the unschedulable
// pool without an event before it is tried again.
func WithUnschedulableTimeout(d time.Duration) Option {
	return func(q *PriorityQueue) { q.unschedulableTimeout = d }
}

// WithPodMayFitAfter sets the filter that decides whether a cluster event
// may make an unschedulable pod fit (by the plugins that rejected it).
// Without it every event moves every pod.
func WithPodMayFitAfter(f func(p *QueuedPodInfo, ev framework.ClusterEvent) bool) Option {
	return func(q *PriorityQueue) { q.mayFit = f }
}

// PriorityQueue is the scheduling queue. Safe for concurrent use; Pop
// blocks.
type PriorityQueue struct {
	mu    sync.Mutex
	cond  sync.Cond
	clock clock.WithTicker

	initialBackoff, maxBackoff, unschedulableTimeout time.Duration
	mayFit                                           func(p *QueuedPodInfo, ev framework.ClusterEvent) bool

	active *keyedHeap
	// backoff holds pods an event moved out of the unschedulable pool
	// before their backoff ended; errBackoff holds pods that failed with
	// an error. When activeQ is empty, Pop takes from backoff at once
	// (upstream's SchedulerPopFromBackoffQ): an idle scheduler does not
	// make a pod that may now fit wait out its penalty. Errors always wait.
	backoff       *keyedHeap
	errBackoff    *keyedHeap
	unschedulable map[string]*QueuedPodInfo
	inFlight      map[string]*inFlight
	// events seen since the current cycle's Pop, for Requeue; past
	// maxRecordedEvents only eventsOverflow (a cycle) is kept.
	events         []recordedEvent
	eventsOverflow int64

	cycle int64
	seq   uint64

	// nom keeps the nominated pods (framework.PodNominator).
	nom *nominator

	closed bool
	// wake tells Run that backoffQ's head may have changed.
	wake chan struct{}
}

// New returns an empty queue on clk.
func New(clk clock.WithTicker, opts ...Option) *PriorityQueue {
	if clk == nil {
		clk = clock.RealClock{}
	}
	q := &PriorityQueue{
		clock:                clk,
		initialBackoff:       DefaultInitialBackoff,
		maxBackoff:           DefaultMaxBackoff,
		unschedulableTimeout: DefaultUnschedulableTimeout,
		unschedulable:        map[string]*QueuedPodInfo{},
		inFlight:             map[string]*inFlight{},
		wake:                 make(chan struct{}, 1),
		nom:                  newNominator(),
	}
	q.cond.L = &q.mu
	q.active = newHeap(func(a, b *QueuedPodInfo) bool {
		pa, pb := priority(a.Pod), priority(b.Pod)
		if pa != pb {
			return pa > pb
		}
		if !a.Timestamp.Equal(b.Timestamp) {
			return a.Timestamp.Before(b.Timestamp)
		}
		return a.seq < b.seq
	})
	byExpiry := func(a, b *QueuedPodInfo) bool {
		ea, eb := q.backoffExpiry(a), q.backoffExpiry(b)
		if !ea.Equal(eb) {
			return ea.Before(eb)
		}
		return a.seq < b.seq
	}
	q.backoff, q.errBackoff = newHeap(byExpiry), newHeap(byExpiry)
	for _, o := range opts {
		o(q)
	}
	return q
}

func priority(p *corev1.Pod) int32 {
	if p.Spec.Priority != nil {
		return *p.Spec.Priority
	}
	return 0
}

// BackoffDuration is how long a pod that failed after attempts attempts
// waits: initial × 2^(attempts−1), at most max.
func (q *PriorityQueue) BackoffDuration(attempts int) time.Duration {
	d := q.initialBackoff
	for i := 1; i < attempts; i++ {
		d *= 2
		if d >= q.maxBackoff {
			return q.maxBackoff
		}
	}
	return min(d, q.maxBackoff)
}

func (q *PriorityQueue) backoffExpiry(p *QueuedPodInfo) time.Time {
	return p.Timestamp.Add(q.BackoffDuration(p.Attempts))
}

func (q *PriorityQueue) backingOff(p *QueuedPodInfo) bool {
	return q.backoffExpiry(p).After(q.clock.Now())
}

func (q *PriorityQueue) newInfo(pod *corev1.Pod) *QueuedPodInfo {
	now := q.clock.Now()
	return &QueuedPodInfo{PodInfo: framework.NewPodInfo(pod), Timestamp: now, FirstSeen: now, key: Key(pod)}
}

func (q *PriorityQueue) pushActive(p *QueuedPodInfo) {
	q.seq++
	p.seq = q.seq
	q.active.AddOrUpdate(p)
	q.cond.Signal()
}

func (q *PriorityQueue) pushBackoff(p *QueuedPodInfo) {
	q.seq++
	p.seq = q.seq
	q.backoff.AddOrUpdate(p)
	q.cond.Signal()
	q.poke()
}

func (q *PriorityQueue) pushErrBackoff(p *QueuedPodInfo) {
	q.seq++
	p.seq = q.seq
	q.errBackoff.AddOrUpdate(p)
	q.poke()
}

func (q *PriorityQueue) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// find returns where a queued pod is, if anywhere.
func (q *PriorityQueue) find(key string) (*QueuedPodInfo, string) {
	if p := q.active.Get(key); p != nil {
		return p, "active"
	}
	if p := q.backoff.Get(key); p != nil {
		return p, "backoff"
	}
	if p := q.errBackoff.Get(key); p != nil {
		return p, "errBackoff"
	}
	if p := q.unschedulable[key]; p != nil {
		return p, "unschedulable"
	}
	return nil, ""
}

func (q *PriorityQueue) remove(key, where string) {
	switch where {
	case "active":
		q.active.Delete(key)
	case "backoff":
		q.backoff.Delete(key)
	case "errBackoff":
		q.errBackoff.Delete(key)
	case "unschedulable":
		delete(q.unschedulable, key)
	}
}

// Add enqueues a pod the scheduler has just seen pending.
func (q *PriorityQueue) Add(pod *corev1.Pod) {
	q.nom.observe(pod)
	q.mu.Lock()
	defer q.mu.Unlock()
	q.add(pod)
}

func (q *PriorityQueue) add(pod *corev1.Pod) {
	key := Key(pod)
	if f := q.inFlight[key]; f != nil {
		if f.uid == pod.UID {
			f.pod = pod
			return
		}
		f.deleted = true // a new pod under the old one's name
	}
	if p, where := q.find(key); p != nil {
		if p.Pod.UID == pod.UID {
			q.update(p, where, pod)
			return
		}
		q.remove(key, where)
	}
	q.pushActive(q.newInfo(pod))
}

// Update records a new version of a pending pod. A pod in the
// unschedulable pool whose spec or metadata changed is tried again.
func (q *PriorityQueue) Update(old, pod *corev1.Pod) {
	q.nom.observe(pod)
	q.mu.Lock()
	defer q.mu.Unlock()
	key := Key(pod)
	if f := q.inFlight[key]; f != nil && f.uid == pod.UID {
		if old != nil && changed(old, pod) {
			f.updated = true
		}
		f.pod = pod
		return
	}
	p, where := q.find(key)
	if p == nil || p.Pod.UID != pod.UID {
		q.add(pod)
		return
	}
	if where == "unschedulable" && old != nil && changed(old, pod) {
		delete(q.unschedulable, key)
		p.PodInfo = framework.NewPodInfo(pod)
		if q.backingOff(p) {
			q.pushBackoff(p)
		} else {
			q.pushActive(p)
		}
		return
	}
	q.update(p, where, pod)
}

func (q *PriorityQueue) update(p *QueuedPodInfo, where string, pod *corev1.Pod) {
	p.PodInfo = framework.NewPodInfo(pod)
	switch where {
	case "active":
		q.active.AddOrUpdate(p)
	case "backoff":
		q.backoff.AddOrUpdate(p)
	case "errBackoff":
		q.errBackoff.AddOrUpdate(p)
	}
}

// changed reports a change other than status and bookkeeping metadata:
// one that may change where the pod fits.
func changed(old, pod *corev1.Pod) bool {
	return !equality.Semantic.DeepEqual(old.Spec, pod.Spec) ||
		!equality.Semantic.DeepEqual(old.Labels, pod.Labels) ||
		!equality.Semantic.DeepEqual(old.Annotations, pod.Annotations)
}

// Delete removes the pod from the queue: deleted, or bound by someone
// else. An in-flight pod is not requeued after its cycle. Its nomination
// ends.
func (q *PriorityQueue) Delete(pod *corev1.Pod) {
	q.nom.delete(pod.UID)
	q.mu.Lock()
	defer q.mu.Unlock()
	key := Key(pod)
	if f := q.inFlight[key]; f != nil && f.uid == pod.UID {
		f.deleted = true
	}
	if p, where := q.find(key); p != nil && p.Pod.UID == pod.UID {
		q.remove(key, where)
	}
}

// Pop blocks until a pod is ready or the queue is closed (then nil): the
// head of activeQ or, when activeQ is empty, the pod in backoffQ whose
// backoff ends first — never one backing off after an error. The pod is in
// flight until Done or Requeue.
func (q *PriorityQueue) Pop() *QueuedPodInfo {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.active.Len() == 0 && q.backoff.Len() == 0 && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return nil
	}
	return q.pop()
}

// TryPop is Pop without blocking: nil when no pod is ready.
func (q *PriorityQueue) TryPop() *QueuedPodInfo {
	q.mu.Lock()
	defer q.mu.Unlock()
	if (q.active.Len() == 0 && q.backoff.Len() == 0) || q.closed {
		return nil
	}
	return q.pop()
}

func (q *PriorityQueue) pop() *QueuedPodInfo {
	p := q.active.Pop()
	if p == nil {
		p = q.backoff.Pop()
	}
	q.cycle++
	q.pruneEvents()
	p.Cycle = q.cycle
	p.Attempts++
	q.inFlight[p.key] = &inFlight{uid: p.Pod.UID, pod: p.Pod}
	return p
}

// Done ends a pod's flight: it was bound (or given up on).
func (q *PriorityQueue) Done(pod *corev1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if f := q.inFlight[Key(pod)]; f != nil && f.uid == pod.UID {
		delete(q.inFlight, Key(pod))
	}
}

// Requeue ends a failed pod's flight. An unschedulable pod (no node fit)
// goes to the unschedulable pool, unless an event that may make it fit
// came since its Pop, or it changed: then it backs off. (Events are kept
// for the current cycle only: requeue an unschedulable pod before the next
// Pop.) A pod
// that failed for another reason (an error, a failed binding) backs off.
// A pod deleted while in flight is dropped. It reports whether the pod was
// requeued.
func (q *PriorityQueue) Requeue(p *QueuedPodInfo, unschedulable bool) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	f := q.inFlight[p.key]
	if f == nil || f.uid != p.Pod.UID {
		return false
	}
	delete(q.inFlight, p.key)
	if f.deleted {
		return false
	}
	if existing, _ := q.find(p.key); existing != nil {
		return false
	}
	if f.pod != p.Pod {
		p.PodInfo = framework.NewPodInfo(f.pod)
	}
	p.Timestamp = q.clock.Now()
	if !unschedulable {
		q.pushErrBackoff(p)
		return true
	}
	if f.updated || q.eventSince(p) {
		q.pushBackoff(p)
		return true
	}
	q.unschedulable[p.key] = p
	return true
}

func (q *PriorityQueue) eventSince(p *QueuedPodInfo) bool {
	if q.eventsOverflow >= p.Cycle {
		return true
	}
	for _, e := range q.events {
		if e.cycle >= p.Cycle && q.podMayFit(p, e.ev) {
			return true
		}
	}
	return false
}

func (q *PriorityQueue) podMayFit(p *QueuedPodInfo, ev framework.ClusterEvent) bool {
	return q.mayFit == nil || q.mayFit(p, ev)
}

// pruneEvents drops the recorded events of cycles before the current one.
// Only the current cycle's pod can be requeued as unschedulable — cycles
// run one at a time and a failed cycle requeues its pod before the next
// Pop; a pod whose binding fails backs off whatever happened — so the list
// holds the events of one cycle at most.
func (q *PriorityQueue) pruneEvents() {
	i := 0
	for i < len(q.events) && q.events[i].cycle < q.cycle {
		i++
	}
	if i > 0 {
		q.events = append(q.events[:0], q.events[i:]...)
	}
}

// MoveAllToActiveOrBackoffQueue is the reaction to a cluster event: every
// pod in the unschedulable pool that may fit after it leaves the pool, to
// backoffQ if it is still backing off, else to activeQ.
func (q *PriorityQueue) MoveAllToActiveOrBackoffQueue(ev framework.ClusterEvent) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.moveAll(ev, func(*QueuedPodInfo) bool { return true })
}

func (q *PriorityQueue) moveAll(ev framework.ClusterEvent, pick func(*QueuedPodInfo) bool) {
	switch {
	case q.cycle == 0:
	case len(q.events) < maxRecordedEvents:
		q.events = append(q.events, recordedEvent{cycle: q.cycle, ev: ev})
	default:
		q.eventsOverflow = q.cycle // too many to keep: assume any could matter
	}
	for key, p := range q.unschedulable {
		if !pick(p) || (ev.Resource != framework.WildCard && !q.podMayFit(p, ev)) {
			continue
		}
		delete(q.unschedulable, key)
		if q.backingOff(p) {
			q.pushBackoff(p)
		} else {
			q.pushActive(p)
		}
	}
}

// FlushBackoffCompleted moves pods whose backoff is over to activeQ.
func (q *PriorityQueue) FlushBackoffCompleted() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	for _, h := range []*keyedHeap{q.backoff, q.errBackoff} {
		for {
			p := h.Peek()
			if p == nil || q.backoffExpiry(p).After(now) {
				break
			}
			h.Pop()
			q.pushActive(p)
		}
	}
}

// FlushUnschedulableLeftover moves pods that sat in the unschedulable pool
// longer than the unschedulable timeout.
func (q *PriorityQueue) FlushUnschedulableLeftover() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	q.moveAll(framework.EventUnschedulableTTL, func(p *QueuedPodInfo) bool {
		return now.Sub(p.Timestamp) >= q.unschedulableTimeout
	})
}

// NextBackoffExpiry is when the first pod in backoffQ may be tried again.
func (q *PriorityQueue) NextBackoffExpiry() (time.Time, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var next time.Time
	ok := false
	for _, h := range []*keyedHeap{q.backoff, q.errBackoff} {
		if p := h.Peek(); p != nil {
			if at := q.backoffExpiry(p); !ok || at.Before(next) {
				next, ok = at, true
			}
		}
	}
	return next, ok
}

// Len returns how many pods are in activeQ, backoffQ and the
// unschedulable pool.
func (q *PriorityQueue) Len() (active, backoff, unschedulable int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.active.Len(), q.backoff.Len() + q.errBackoff.Len(), len(q.unschedulable)
}

// InFlight is how many pods are popped and not yet Done or requeued.
func (q *PriorityQueue) InFlight() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.inFlight)
}

// Where reports which queue holds the pod: "active", "backoff",
// "unschedulable", "inflight", or "" when none.
func (q *PriorityQueue) Where(pod *corev1.Pod) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	if p, where := q.find(Key(pod)); p != nil {
		if where == "errBackoff" {
			return "backoff"
		}
		return where
	}
	if f := q.inFlight[Key(pod)]; f != nil && f.uid == pod.UID {
		return "inflight"
	}
	return ""
}

// Close wakes Pop for good.
func (q *PriorityQueue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

// Run moves pods by time until ctx ends, then closes the queue: backoffQ
// to activeQ the moment each backoff expires, and overstayed pods out of
// the unschedulable pool every second.
func (q *PriorityQueue) Run(ctx context.Context) {
	defer q.Close()
	flush := q.clock.NewTicker(flushPeriod)
	defer flush.Stop()
	timer := q.clock.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		q.FlushBackoffCompleted()
		wait := time.Hour
		if at, ok := q.NextBackoffExpiry(); ok {
			wait = max(at.Sub(q.clock.Now()), time.Millisecond)
		}
		if !timer.Stop() {
			select {
			case <-timer.C():
			default:
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-q.wake:
		case <-timer.C():
		case <-flush.C():
			q.FlushUnschedulableLeftover()
		}
	}
}
