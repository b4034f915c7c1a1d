package gopool

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestWorkerIsReused(t *testing.T) {
	p := New(4, time.Minute)
	for i := 0; i < 100; i++ {
		mustRun(t, p, "one after another")
	}
	if got := p.Started(); got != 1 {
		t.Fatalf("100 functions one after another started %d workers, want 1 reused", got)
	}
}

func TestGoNeverWaitsBeyondMax(t *testing.T) {
	const max, n = 3, 10
	p := New(max, time.Minute)
	release := make(chan struct{})
	var started, finished sync.WaitGroup
	started.Add(n)
	finished.Add(n)
	for i := 0; i < n; i++ {
		p.Go(func() {
			started.Done()
			<-release
			finished.Done()
		})
	}
	waited := make(chan struct{})
	go func() { started.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatalf("%d blocked functions on a pool of %d: not all started", n, max)
	}
	if got := p.Workers(); got != max {
		t.Errorf("workers = %d, want %d (the rest run on goroutines of their own)", got, max)
	}
	close(release)
	finished.Wait()
}

func TestIdleWorkersEnd(t *testing.T) {
	p := New(8, 20*time.Millisecond)
	var wg sync.WaitGroup
	release := make(chan struct{})
	for i := 0; i < 8; i++ {
		wg.Add(1)
		p.Go(func() { defer wg.Done(); <-release })
	}
	close(release)
	wg.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for p.Workers() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d workers still running 10 s after the pool went idle (idle timeout 20 ms)", p.Workers())
		}
		time.Sleep(5 * time.Millisecond)
	}
	mustRun(t, p, "once its workers ended")
}

// mustRun fails t unless p.Run runs a function before it returns.
func mustRun(t *testing.T, p *Pool, when string) {
	t.Helper()
	ran := false
	p.Run(func() { ran = true })
	if !ran {
		t.Fatalf("Run %s returned without running f", when)
	}
}

func TestRunRaisesThePanicInTheCaller(t *testing.T) {
	p := New(2, time.Minute)
	catch := func(f func()) (v any) {
		defer func() { v = recover() }()
		p.Run(f)
		return nil
	}
	// An error keeps its identity: net/http tells ErrAbortHandler apart.
	if v := catch(func() { panic(http.ErrAbortHandler) }); v != http.ErrAbortHandler {
		t.Fatalf("panic(http.ErrAbortHandler) came back as %v", v)
	}
	other := errors.New("boom")
	if v := catch(func() { panic(other) }); v != other {
		t.Fatalf("panic(err) came back as %v", v)
	}
	// Any other value says where it happened: the worker's stack.
	v := catch(func() { panic("deep trouble") })
	s, ok := v.(string)
	if !ok || !strings.HasPrefix(s, "deep trouble") || !strings.Contains(s, "TestRunRaisesThePanicInTheCaller") {
		t.Fatalf("panic(\"deep trouble\") came back as %#v, want the value and the worker's stack", v)
	}
	// The worker that panicked did not take the pool down with it.
	mustRun(t, p, "after a panic")
}

// TestEveryTaskRunsOnceWhileWorkersTimeOut: workers that end while work
// arrives (an idle timeout of 1 ms, shorter than the gaps) lose no task and
// run none twice.
func TestEveryTaskRunsOnceWhileWorkersTimeOut(t *testing.T) {
	p := New(4, time.Millisecond)
	const callers, each = 8, 200
	var mu sync.Mutex
	ran := map[int]int{}
	var wg sync.WaitGroup
	for c := 0; c < callers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				id := c*each + i
				if i%3 == 0 {
					time.Sleep(time.Duration(i%5) * 300 * time.Microsecond)
				}
				if i%2 == 0 {
					p.Run(func() { mu.Lock(); ran[id]++; mu.Unlock() })
					continue
				}
				done := make(chan struct{})
				p.Go(func() { mu.Lock(); ran[id]++; mu.Unlock(); close(done) })
				<-done
			}
		}()
	}
	wg.Wait()
	if len(ran) != callers*each {
		t.Fatalf("%d of %d tasks ran", len(ran), callers*each)
	}
	for id, n := range ran {
		if n != 1 {
			t.Fatalf("task %d ran %d times", id, n)
		}
	}
	if w := p.Workers(); w > 4 {
		t.Fatalf("%d workers on a pool of 4", w)
	}
}

// deep uses about n KB of stack.
//
//go:noinline
func deep(n int) int {
	var pad [1000]byte
	pad[n%1000] = byte(n)
	if n == 0 {
		return int(pad[0])
	}
	return deep(n-1) + int(pad[n%1000])
}

// BenchmarkDeepCall: a function that needs ~32 KB of stack, on a new
// goroutine each time (as net/http runs a handler) and on the pool.
func BenchmarkDeepCall(b *testing.B) {
	b.Run("goroutine", func(b *testing.B) {
		for b.Loop() {
			done := make(chan struct{})
			go func() { deep(32); close(done) }()
			<-done
		}
	})
	b.Run("pool", func(b *testing.B) {
		p := New(4, time.Minute)
		for b.Loop() {
			p.Run(func() { deep(32) })
		}
	})
}
