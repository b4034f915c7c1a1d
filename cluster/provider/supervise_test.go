package provider

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"
)

// crashy is a Provider whose actor "a" dies again right after every start
// until it has been started `crashes` times; "b" runs throughout.
type crashy struct {
	Provider
	mu      sync.Mutex
	running map[string]bool
	starts  []time.Time
	crashes int
}

func (c *crashy) Actors() []Actor {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Actor
	for _, n := range []string{"a", "b"} {
		a := Actor{Name: n}
		if c.running[n] {
			a.PID = 1
		}
		out = append(out, a)
	}
	return out
}

func (c *crashy) Start(_ context.Context, name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if name != "a" {
		panic("b was restarted while it ran")
	}
	c.starts = append(c.starts, time.Now())
	// Running until the next look, then dead again while crashes last.
	c.running[name] = len(c.starts) > c.crashes
	return nil
}

func TestSuperviseRestartsWithDoublingBackoff(t *testing.T) {
	c := &crashy{running: map[string]bool{"b": true}, crashes: 3}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	policy := RestartPolicy{Initial: 100 * time.Millisecond, Max: time.Second, Stable: time.Minute}
	start := time.Now()
	go func() { _ = Supervise(ctx, c, policy, io.Discard) }()
	for {
		c.mu.Lock()
		n, up := len(c.starts), c.running["a"]
		c.mu.Unlock()
		if up {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("a not running after %d starts", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.starts) != 4 {
		t.Fatalf("%d starts, want 4 (3 crashes)", len(c.starts))
	}
	// Backoffs 100, 200, 400, 800 ms: each gap at least its backoff.
	prev, want := start, 100*time.Millisecond
	for i, s := range c.starts {
		if gap := s.Sub(prev); gap < want {
			t.Errorf("start %d after %v, want at least the %v backoff", i+1, gap, want)
		}
		prev, want = s, min(2*want, policy.Max)
	}
	if total := c.starts[3].Sub(start); total > 5*time.Second {
		t.Errorf("four starts took %v", total)
	}
}

func TestSuperviseEndsWithTheCluster(t *testing.T) {
	err := Supervise(context.Background(), emptyProvider{}, DefaultRestart, nil)
	if err == nil {
		t.Fatal("supervising a cluster that is gone returned nil")
	}
}

type emptyProvider struct{ Provider }

func (emptyProvider) Actors() []Actor { return nil }
