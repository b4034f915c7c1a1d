package controller

import (
	"sync"
	"time"
)

// Expectations record, per controller key, how many creates and deletes the
// controller has sent and not yet seen come back through its watch. While a
// key has outstanding expectations its cache is known to be behind the
// controller's own writes, and a sync must not act on it: it would count
// too few pods and create again. Expectations expire after a TTL so that a
// lost event never wedges a key forever.
//
// This is upstream's ControllerExpectations contract, kept small.
type Expectations struct {
	mu  sync.Mutex
	m   map[string]*expectation
	ttl time.Duration
	now func() time.Time
}

type expectation struct {
	adds, dels int64
	set        time.Time
}

// NewExpectations returns expectations whose entries expire after ttl.
func NewExpectations(ttl time.Duration, now func() time.Time) *Expectations {
	if now == nil {
		now = time.Now
	}
	return &Expectations{m: map[string]*expectation{}, ttl: ttl, now: now}
}

// Expect records that adds creates and dels deletes are about to be sent.
func (e *Expectations) Expect(key string, adds, dels int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := e.m[key]
	if x == nil {
		x = &expectation{}
		e.m[key] = x
	}
	x.adds += int64(adds)
	x.dels += int64(dels)
	x.set = e.now()
}

// Observed lowers the expectations when the watch shows a create (add) or
// a delete, or when a sent request failed and will never show.
func (e *Expectations) Observed(key string, adds, dels int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x := e.m[key]; x != nil {
		x.adds -= int64(adds)
		x.dels -= int64(dels)
	}
}

// Satisfied reports whether key may be synced from the cache: nothing is
// outstanding, or what is has expired.
func (e *Expectations) Satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := e.m[key]
	if x == nil || (x.adds <= 0 && x.dels <= 0) {
		return true
	}
	return e.now().Sub(x.set) > e.ttl
}

// Forget drops the key (its owner is gone).
func (e *Expectations) Forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, key)
}
