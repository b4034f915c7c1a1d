package trace

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// syncBuffer is a bytes.Buffer safe for the tracer's writer goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// Under concurrent emitters with room in the buffer, every event arrives,
// decodes, and each emitter's events keep their order and timestamps.
func TestNoLossAndOrderUnderLoad(t *testing.T) {
	const emitters, each = 8, 5000
	var out syncBuffer
	tr := New("test", &out, emitters*each)
	var wg sync.WaitGroup
	for e := range emitters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				tr.Emit(PodBound, "Pod", fmt.Sprint("ns", e), fmt.Sprint("p", i), types.UID(fmt.Sprint(e, "-", i)))
			}
		}()
	}
	wg.Wait()
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if tr.Dropped() != 0 || tr.Written() != emitters*each {
		t.Fatalf("dropped %d, written %d", tr.Dropped(), tr.Written())
	}
	events, sum, err := Read(&out.b)
	if err != nil {
		t.Fatal(err)
	}
	if sum == nil || sum.Actor != "test" || sum.Written != emitters*each || sum.Dropped != 0 {
		t.Fatalf("closing summary %+v", sum)
	}
	last := map[string]int{}
	lastTS := map[string]int64{}
	n := 0
	for _, ev := range events {
		var i int
		fmt.Sscanf(ev.Name, "p%d", &i)
		if prev, ok := last[ev.Namespace]; ok && i != prev+1 {
			t.Fatalf("%s: event p%d after p%d", ev.Namespace, i, prev)
		}
		if ev.TS < lastTS[ev.Namespace] {
			t.Fatalf("%s: timestamp went back", ev.Namespace)
		}
		last[ev.Namespace], lastTS[ev.Namespace] = i, ev.TS
		if ev.Step != PodBound || ev.Actor != "test" || ev.Kind != "Pod" {
			t.Fatalf("fields: %+v", ev)
		}
		n++
	}
	if n != emitters*each {
		t.Fatalf("decoded %d events", n)
	}
}

// blockingWriter blocks every write until released; entered is closed when
// the first write arrives, so a test knows the writer goroutine is stuck.
type blockingWriter struct {
	entered chan struct{}
	once    sync.Once
	release chan struct{}
}

func (b *blockingWriter) Write(p []byte) (int, error) {
	b.once.Do(func() { close(b.entered) })
	<-b.release
	return len(p), nil
}

// A stalled sink never blocks Emit: once the writer is stuck and the buffer
// is full, every further event is dropped and counted.
func TestFullBufferDropsAndCounts(t *testing.T) {
	w := &blockingWriter{entered: make(chan struct{}), release: make(chan struct{})}
	tr := New("test", w, 4)
	tr.Emit(PodScheduled, "Pod", "ns", "first", "")
	<-w.entered           // the writer goroutine holds "first" and blocks in the sink
	for i := range 1000 { // a blocking Emit would hang here until the test times out
		tr.Emit(PodScheduled, "Pod", "ns", fmt.Sprint(i), "")
	}
	if got := tr.Dropped(); got != 996 {
		t.Fatalf("dropped %d of 1000 with the writer stuck and a buffer of 4, want 996", got)
	}
	close(w.release)
	_ = tr.Close()
	if tr.Dropped()+tr.Written() != 1001 {
		t.Fatalf("dropped %d + written %d != 1001", tr.Dropped(), tr.Written())
	}
}

// The closing summary carries the drop count; a sink without one (its
// process was killed) and a torn last line read as such.
func TestReadSummaryAndTornTail(t *testing.T) {
	var out syncBuffer
	tr := New("kubelet-n1", &out, 2)
	for i := range 3 {
		tr.Emit(PodBound, "Pod", "ns", fmt.Sprint(i), "")
	}
	_ = tr.Close()
	evs, sum, err := Read(bytes.NewReader(out.b.Bytes()))
	if err != nil || sum == nil {
		t.Fatalf("read: %v, summary %v", err, sum)
	}
	if uint64(len(evs)) != sum.Written || sum.Written+sum.Dropped != 3 || sum.Actor != "kubelet-n1" {
		t.Fatalf("%d events, summary %+v", len(evs), sum)
	}
	// Killed mid-write: no summary, a torn last line.
	killed := `{"ts_ns":1,"step":"pod.bound","actor":"a","kind":"Pod","namespace":"n","name":"p","uid":"u"}` + "\n" + `{"ts_ns":2,"st`
	evs, sum, err = Read(strings.NewReader(killed))
	if err != nil || sum != nil || len(evs) != 1 {
		t.Fatalf("killed sink: %v, %v, %d events", err, sum, len(evs))
	}
	// A corrupt line in the middle is an error, not silently skipped.
	if _, _, err := Read(strings.NewReader("{bad\n" + killed)); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("corrupt middle line: %v", err)
	}
}

func TestNilTracerIsSilent(t *testing.T) {
	var tr *Tracer
	tr.Emit(PodBound, "Pod", "a", "b", "c")
	if tr.Dropped() != 0 || tr.Close() != nil {
		t.Fatal("nil tracer")
	}
}

func TestEscaping(t *testing.T) {
	var out syncBuffer
	tr := New("a\"ctor", &out, 10)
	tr.Emit("s", "K", "ns", "na\\me\n", "u")
	_ = tr.Close()
	evs, sum, err := Read(&out.b)
	if err != nil || len(evs) != 1 || sum == nil || sum.Actor != "a\"ctor" {
		t.Fatalf("%v %+v %+v", err, evs, sum)
	}
	if ev := evs[0]; ev.Actor != "a\"ctor" || ev.Name != "na\\me\n" {
		t.Fatalf("%+v", ev)
	}
}

// BenchmarkEmit is the cost an actor pays per step stamp on its hot path.
func BenchmarkEmit(b *testing.B) {
	tr := New("bench", io.Discard, DefaultBuffer)
	defer tr.Close()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tr.Emit(PodBound, "Pod", "kstep-load-0", "web-abcde", "0b7e5c3a-1f2d-4c5e-9a8b-7c6d5e4f3a2b")
		}
	})
	b.StopTimer()
	if d := tr.Dropped(); d > 0 {
		b.ReportMetric(float64(d)/float64(b.N), "dropped/op")
	}
}

// BenchmarkWrite is the writer goroutine's cost per event (encode + write).
func BenchmarkWrite(b *testing.B) {
	ev := Event{TS: time.Now().UnixNano(), Step: PodBound, Actor: "scheduler-0", Kind: "Pod", Namespace: "kstep-load-0", Name: "web-abcde", UID: "0b7e5c3a-1f2d-4c5e-9a8b-7c6d5e4f3a2b"}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for range b.N {
		buf = appendJSON(buf[:0], &ev)
	}
}
