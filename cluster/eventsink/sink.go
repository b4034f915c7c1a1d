package eventsink

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// Options bound how long an Event waits and how many wait.
type Options struct {
	// Quiet: a batch is written once no Event has been recorded for this
	// long: the burst of work the Events describe is over.
	Quiet time.Duration
	// MaxHold: a batch is written when its oldest Event has waited this
	// long, however busy the actor is.
	MaxHold time.Duration
	// MaxBatch: a batch this large is written at once.
	MaxBatch int
	// Parallel: writes of one batch in flight at once.
	Parallel int
	// MaxPending: Events waiting beyond this many are dropped (counted).
	MaxPending int
	// Attempts: a write that fails for want of an answer (not refused by
	// the apiserver) is tried this many times in all.
	Attempts int
}

// DefaultOptions: an Event waits 25 ms of quiet, at most 250 ms.
func DefaultOptions() Options {
	return Options{Quiet: 25 * time.Millisecond, MaxHold: 250 * time.Millisecond, MaxBatch: 200, Parallel: 16, MaxPending: 10000, Attempts: 3}
}

var (
	written = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kstep_events_written_total",
		Help: "Event creates and patches the event sinks of this process had acknowledged.",
	})
	folded = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kstep_events_folded_total",
		Help: "Aggregation patches folded into an Event still waiting to be written (no write of their own).",
	})
	dropped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kstep_events_dropped_total",
		Help: "Events the event sinks of this process did not write, by reason: full (MaxPending waiting), refused (the apiserver refused it), unanswered (Attempts without an answer), shutdown.",
	}, []string{"reason"})
	batchSize = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "kstep_events_batch_size",
		Help:    "Writes per batch of an event sink.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 10),
	})
)

func init() {
	prometheus.MustRegister(written, folded, dropped, batchSize)
}

// pending is one write waiting: a create of ev, or a patch of an Event
// already written (ev is the correlator's copy, created instead if the
// patch finds it gone, as client-go's recordEvent does).
type pending struct {
	ev       *corev1.Event
	patch    []byte
	attempts int
	at       time.Time // when it was queued (again, after a failed attempt)
}

// Sink is a record.EventSink that writes in batches off the caller's
// path. Create and Patch return at once with the Event as given; the
// write happens when the batch is flushed (Run). It is safe for
// concurrent use.
type Sink struct {
	client typedcorev1.EventsGetter
	opts   Options
	log    *slog.Logger

	mu      sync.Mutex
	queue   []*pending
	creates map[types.NamespacedName]*pending // creates waiting, by Event
	last    time.Time                         // when the newest waiting Event was recorded
	wake    chan struct{}
}

var _ record.EventSink = &Sink{}

// NewSink returns a sink writing through client; Run must be running for
// anything to be written.
func NewSink(client typedcorev1.EventsGetter, opts Options, log *slog.Logger) *Sink {
	if log == nil {
		log = slog.Default()
	}
	return &Sink{client: client, opts: opts, log: log, creates: map[types.NamespacedName]*pending{}, wake: make(chan struct{}, 1)}
}

func keyOf(ev *corev1.Event) types.NamespacedName {
	return types.NamespacedName{Namespace: ev.Namespace, Name: ev.Name}
}

func (s *Sink) enqueue(p *pending, now time.Time) bool {
	if len(s.queue) >= s.opts.MaxPending {
		dropped.WithLabelValues("full").Inc()
		return false
	}
	p.at, s.last = now, now
	s.queue = append(s.queue, p)
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return true
}

// Create queues the Event's create and returns it at once.
func (s *Sink) Create(ev *corev1.Event) (*corev1.Event, error) {
	p := &pending{ev: ev.DeepCopy()}
	s.mu.Lock()
	if s.enqueue(p, time.Now()) {
		s.creates[keyOf(ev)] = p
	}
	s.mu.Unlock()
	return ev, nil
}

// Update writes at once: client-go's recorder never calls it.
func (s *Sink) Update(ev *corev1.Event) (*corev1.Event, error) {
	return s.client.Events(ev.Namespace).Update(context.TODO(), ev, metav1.UpdateOptions{})
}

// Patch folds an aggregation patch into the Event's create if that is
// still waiting, else queues the patch; it returns at once.
func (s *Sink) Patch(ev *corev1.Event, data []byte) (*corev1.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.creates[keyOf(ev)]; p != nil {
		if merged, err := applyPatch(p.ev, data); err == nil {
			p.ev = merged
			folded.Inc()
			s.last = time.Now()
			return ev, nil
		}
	}
	s.enqueue(&pending{ev: ev.DeepCopy(), patch: data}, time.Now())
	return ev, nil
}

// applyPatch applies the recorder's strategic merge patch (count,
// lastTimestamp, message, series) to a waiting Event.
func applyPatch(ev *corev1.Event, patch []byte) (*corev1.Event, error) {
	orig, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	b, err := strategicpatch.StrategicMergePatch(orig, patch, &corev1.Event{})
	if err != nil {
		return nil, err
	}
	out := &corev1.Event{}
	if err := json.Unmarshal(b, out); err != nil {
		return nil, err
	}
	return out, nil
}

// due says when the waiting batch is to be written (zero: nothing waits).
func (s *Sink) due() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return time.Time{}
	}
	if len(s.queue) >= s.opts.MaxBatch {
		return s.last // now
	}
	// The oldest waits at most MaxHold: the queue is in arrival order.
	if quiet, held := s.last.Add(s.opts.Quiet), s.queue[0].at.Add(s.opts.MaxHold); quiet.Before(held) {
		return quiet
	}
	return s.queue[0].at.Add(s.opts.MaxHold)
}

// take removes up to MaxBatch waiting writes.
func (s *Sink) take() []*pending {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := min(len(s.queue), s.opts.MaxBatch)
	batch := s.queue[:n:n]
	s.queue = append([]*pending(nil), s.queue[n:]...)
	for _, p := range batch {
		if p.patch == nil && s.creates[keyOf(p.ev)] == p {
			delete(s.creates, keyOf(p.ev))
		}
	}
	return batch
}

// Run writes batches until ctx ends, then what is waiting, for at most a
// second.
func (s *Sink) Run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		due := s.due()
		if due.IsZero() {
			select {
			case <-ctx.Done():
				s.drain()
				return
			case <-s.wake:
				continue
			}
		}
		if wait := time.Until(due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				s.drain()
				return
			case <-s.wake:
				// A newer Event: the quiet restarts; look again. (Since
				// Go 1.23 a stopped timer delivers nothing stale.)
				timer.Stop()
				continue
			case <-timer.C:
				continue
			}
		}
		s.flush(ctx, s.take())
	}
}

func (s *Sink) drain() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for {
		batch := s.take()
		if len(batch) == 0 {
			return
		}
		s.flush(ctx, batch)
		if ctx.Err() != nil {
			s.mu.Lock()
			dropped.WithLabelValues("shutdown").Add(float64(len(s.queue)))
			s.queue = nil
			s.mu.Unlock()
			return
		}
	}
}

// flush writes a batch, Parallel at a time, and queues again what went
// unanswered.
func (s *Sink) flush(ctx context.Context, batch []*pending) {
	if len(batch) == 0 {
		return
	}
	batchSize.Observe(float64(len(batch)))
	sem := make(chan struct{}, max(1, s.opts.Parallel))
	var wg sync.WaitGroup
	var retry []*pending
	var rmu sync.Mutex
	for _, p := range batch {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if again := s.write(ctx, p); again {
				rmu.Lock()
				retry = append(retry, p)
				rmu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(retry) > 0 {
		s.mu.Lock()
		now := time.Now()
		for _, p := range retry {
			s.enqueue(p, now)
		}
		s.mu.Unlock()
	}
}

// write performs one waiting write; it reports whether to try again.
func (s *Sink) write(ctx context.Context, p *pending) bool {
	p.attempts++
	ev := p.ev
	var err error
	if p.patch != nil {
		_, err = s.client.Events(ev.Namespace).Patch(ctx, ev.Name, types.StrategicMergePatchType, p.patch, metav1.PatchOptions{})
		if apierrors.IsNotFound(err) {
			// Gone (or never written): create it, as client-go does.
			ev = ev.DeepCopy()
			ev.ResourceVersion = ""
			_, err = s.client.Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{})
		}
	} else {
		_, err = s.client.Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{})
	}
	switch {
	case err == nil:
		written.Inc()
		return false
	case apierrors.IsAlreadyExists(err):
		return false // written by an earlier attempt that went unanswered
	case apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) || !isStatus(err):
		if p.attempts < s.opts.Attempts && ctx.Err() == nil {
			return true
		}
		dropped.WithLabelValues("unanswered").Inc()
	default:
		dropped.WithLabelValues("refused").Inc()
		s.log.Debug("event refused", "event", ev.Namespace+"/"+ev.Name, "reason", ev.Reason, "err", err)
	}
	return false
}

func isStatus(err error) bool {
	_, ok := err.(apierrors.APIStatus)
	return ok
}

// Recorders is one actor's broadcaster writing through a Sink.
type Recorders struct {
	broadcaster record.EventBroadcaster
	cancel      context.CancelFunc
	done        chan struct{}
}

// Start starts a broadcaster recording to a Sink of its own on client; Stop
// ends both, writing what waits.
func Start(ctx context.Context, client kubernetes.Interface, opts Options, log *slog.Logger) *Recorders {
	ctx, cancel := context.WithCancel(ctx)
	sink := NewSink(client.CoreV1(), opts, log)
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartRecordingToSink(sink)
	r := &Recorders{broadcaster: b, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		sink.Run(ctx)
	}()
	return r
}

// Recorder records as source.
func (r *Recorders) Recorder(source corev1.EventSource) record.EventRecorder {
	return r.broadcaster.NewRecorder(scheme.Scheme, source)
}

// Stop shuts the broadcaster down and waits for the sink to write what
// waits (at most a second).
func (r *Recorders) Stop() {
	r.broadcaster.Shutdown()
	r.cancel()
	<-r.done
}
