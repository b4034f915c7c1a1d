package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// The steps, in the order a ReplicaSet's pod goes through them.
const (
	RSReceived          = "rs.received"            // ① apiserver got the create
	RSPersisted         = "rs.persisted"           // ① etcd acknowledged it
	RSObserved          = "rs.observed"            // ② controller saw it
	PodCreateSent       = "pod.create.sent"        // ③ controller sent a pod create
	PodPersisted        = "pod.persisted"          // ③ etcd acknowledged the pod
	PodObservedSched    = "pod.observed.scheduler" // ④ scheduler saw the pod
	PodScheduled        = "pod.scheduled"          // ⑤ the algorithm chose a node
	PodBound            = "pod.bound"              // ⑤ the binding was persisted
	PodObservedKubelet  = "pod.observed.kubelet"   // ⑥ kubelet saw its pod
	PodSandboxReady     = "pod.sandbox.ready"      // ⑦ sandbox + CNI
	PodImagePulled      = "pod.image.pulled"       // ⑦ image present
	PodContainerStarted = "pod.container.started"  // ⑦ container running
	PodProbeReady       = "pod.probe.ready"        // ⑦ readiness probe passed
	PodStatusPersisted  = "pod.status.persisted"   // ⑧ kubelet's status write acknowledged (its reply lost: seen persisted)
	EndpointsUpdated    = "endpoints.updated"      // ⑧ endpoints list the pod
	PodReadyObserved    = "pod.ready.observed"     // ⑧ the client's watch saw Ready
)

// The watch-cache stamps: an apiserver's watch cache received a change from
// etcd, before it offered the change to any watcher. Every apiserver stamps
// them, so a watcher's receipt (rs.observed, pod.observed.*, endpoints,
// pod.ready.observed) is measured from its own apiserver's: the writer's
// acknowledgement (rs.persisted, pod.persisted, pod.bound,
// pod.status.persisted) does not precede it, because etcd notifies watchers
// before it answers the writer.
const (
	RSCached       = "rs.cached"        // a ReplicaSet was created
	PodCached      = "pod.cached"       // a pod was created
	PodBoundCached = "pod.bound.cached" // a pod got its spec.nodeName
	PodReadyCached = "pod.ready.cached" // a pod's Ready condition became True
)

// Event is one stamp. TS is nanoseconds since the Unix epoch on the host's
// clock: every actor of a run shares it.
type Event struct {
	TS        int64     `json:"ts_ns"`
	Step      string    `json:"step"`
	Actor     string    `json:"actor"`
	Kind      string    `json:"kind"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid"`
}

// Tracer sinks one process's events. Safe for concurrent use.
type Tracer struct {
	actor   string
	ch      chan Event
	dropped atomic.Uint64
	written atomic.Uint64
	out     io.Writer
	closer  io.Closer
	done    chan struct{}
	once    sync.Once
	now     func() time.Time
}

// DefaultBuffer is the number of events held before Emit drops: at 64 bytes
// of strings per event a few MiB, and seconds of the heaviest load.
const DefaultBuffer = 1 << 16

// New returns a tracer writing JSON lines to w through a buffer of size
// events. Close flushes it.
func New(actor string, w io.Writer, size int) *Tracer {
	if size <= 0 {
		size = DefaultBuffer
	}
	t := &Tracer{actor: actor, ch: make(chan Event, size), out: w, done: make(chan struct{}), now: time.Now}
	if c, ok := w.(io.Closer); ok {
		t.closer = c
	}
	go t.run()
	return t
}

// Open returns a tracer appending to the file at path, or nil (a valid,
// silent tracer) when path is empty.
func Open(path, actor string) (*Tracer, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("trace sink %s: %w", path, err)
	}
	return New(actor, f, DefaultBuffer), nil
}

// Emit stamps step for one object now. It never blocks: a full buffer drops
// the event and counts it.
func (t *Tracer) Emit(step, kind, namespace, name string, uid types.UID) {
	if t == nil {
		return
	}
	t.EmitAt(t.now(), step, kind, namespace, name, uid)
}

// EmitAt stamps step at a time the caller took when the step happened.
func (t *Tracer) EmitAt(at time.Time, step, kind, namespace, name string, uid types.UID) {
	if t == nil {
		return
	}
	select {
	case t.ch <- Event{TS: at.UnixNano(), Step: step, Actor: t.actor, Kind: kind, Namespace: namespace, Name: name, UID: uid}:
	default:
		t.dropped.Add(1)
	}
}

// Dropped is how many events were lost to a full buffer.
func (t *Tracer) Dropped() uint64 {
	if t == nil {
		return 0
	}
	return t.dropped.Load()
}

// Written is how many events reached the sink.
func (t *Tracer) Written() uint64 {
	if t == nil {
		return 0
	}
	return t.written.Load()
}

func (t *Tracer) run() {
	defer close(t.done)
	bw := bufio.NewWriterSize(t.out, 64<<10)
	buf := make([]byte, 0, 256)
	for ev := range t.ch {
		buf = appendJSON(buf[:0], &ev)
		_, _ = bw.Write(buf)
		t.written.Add(1)
		if len(t.ch) == 0 {
			_ = bw.Flush()
		}
	}
	_ = bw.Flush()
}

// appendJSON encodes an event without reflection: the writer goroutine must
// keep up with every actor's hot path.
func appendJSON(b []byte, e *Event) []byte {
	b = append(b, `{"ts_ns":`...)
	b = strconv.AppendInt(b, e.TS, 10)
	b = appendField(b, "step", e.Step)
	b = appendField(b, "actor", e.Actor)
	b = appendField(b, "kind", e.Kind)
	b = appendField(b, "namespace", e.Namespace)
	b = appendField(b, "name", e.Name)
	b = appendField(b, "uid", string(e.UID))
	return append(b, "}\n"...)
}

func appendField(b []byte, k, v string) []byte {
	b = append(b, ',', '"')
	b = append(b, k...)
	b = append(b, '"', ':')
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			q, _ := json.Marshal(v) // rare: names are DNS labels
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, v...)
	return append(b, '"')
}

// Summary is the last record a tracer writes: how many events it wrote and
// dropped. A sink without one was not closed (its process was killed), so
// nothing proves it lost no events.
type Summary struct {
	Actor    string `json:"actor"`
	Written  uint64 `json:"written"`
	Dropped  uint64 `json:"dropped"`
	ClosedNS int64  `json:"closed_ns"`
}

// Close stops accepting events, writes what is buffered and the closing
// Summary record, and closes the sink. Emit after Close panics; call it once,
// at the end.
func (t *Tracer) Close() error {
	if t == nil {
		return nil
	}
	var err error
	t.once.Do(func() {
		close(t.ch)
		<-t.done
		rec, _ := json.Marshal(struct {
			S Summary `json:"trace_summary"`
		}{Summary{Actor: t.actor, Written: t.written.Load(), Dropped: t.dropped.Load(), ClosedNS: t.now().UnixNano()}})
		_, err = t.out.Write(append(rec, '\n'))
		if t.closer != nil {
			if cerr := t.closer.Close(); err == nil {
				err = cerr
			}
		}
	})
	<-t.done
	return err
}
