package kubelet

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Backoff is upstream's restart backoff (flowcontrol.Backoff as the kubelet
// uses it): the first restart of a key is immediate; each later one waits,
// from the moment the container last finished, a delay that starts at
// initial and doubles up to max. A key whose last restart is older than
// 2×max starts over. Safe for concurrent use.
//
// kstep's defaults are upstream's (10 s doubling to 5 min); the kubelet's
// --crashloop-backoff-* flags shorten them for tests and benchmarks.
type Backoff struct {
	initial, max time.Duration
	clock        clock.PassiveClock
	mu           sync.Mutex
	entries      map[string]*backoffEntry
}

type backoffEntry struct {
	delay      time.Duration
	lastUpdate time.Time
}

// NewBackoff returns a backoff of initial doubling to max.
func NewBackoff(initial, max time.Duration, clk clock.PassiveClock) *Backoff {
	return &Backoff{initial: initial, max: max, clock: clk, entries: map[string]*backoffEntry{}}
}

// InBackoffSince reports whether key must still wait after an event (the
// container's finish) at since, and for how much longer.
func (b *Backoff) InBackoffSince(key string, since time.Time) (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	if !ok || b.expired(e, since) {
		return false, 0
	}
	left := e.delay - b.clock.Since(since)
	return left > 0, left
}

// Next records a restart of key for an event at since and lengthens the
// delay the next one will wait.
func (b *Backoff) Next(key string, since time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	if !ok || b.expired(e, since) {
		b.entries[key] = &backoffEntry{delay: b.initial, lastUpdate: since}
		return
	}
	e.delay = min(2*e.delay, b.max)
	e.lastUpdate = since
}

// Delay is the current delay of key (0 when it has none).
func (b *Backoff) Delay(key string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.entries[key]; ok {
		return e.delay
	}
	return 0
}

// Reset forgets key.
func (b *Backoff) Reset(key string) {
	b.mu.Lock()
	delete(b.entries, key)
	b.mu.Unlock()
}

// ForgetPrefix forgets every key starting with prefix (a pod's UID).
func (b *Backoff) ForgetPrefix(prefix string) {
	b.mu.Lock()
	for k := range b.entries {
		if len(k) >= len(prefix) && k[:len(prefix)] == prefix {
			delete(b.entries, k)
		}
	}
	b.mu.Unlock()
}

func (b *Backoff) expired(e *backoffEntry, since time.Time) bool {
	return since.Sub(e.lastUpdate) > 2*b.max
}
