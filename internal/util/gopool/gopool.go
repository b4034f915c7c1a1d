package gopool

import (
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"time"
)

// Pool runs functions on up to max long-lived workers. New makes one.
type Pool struct {
	max     int
	idleFor time.Duration

	mu      sync.Mutex
	idle    []*worker // waiting for work, the most recently busy last
	workers int       // running or idle
	started int64     // workers ever started
}

type worker struct{ tasks chan task }

type task struct {
	f    func()
	done chan any // Run's: the panic, or nil, once the worker is idle again
}

// New returns a pool of at most max workers; a worker idle for idle ends.
func New(max int, idle time.Duration) *Pool {
	return &Pool{max: max, idleFor: idle}
}

// Go runs f asynchronously: on the worker that was busy most recently of
// those waiting, else on a new worker (which stays for the next function),
// or, with max workers busy, on a goroutine of its own as `go f()` would.
// It never blocks and never queues: f starts at once either way. A panic in
// f ends the process, as it would in a goroutine of its own.
func (p *Pool) Go(f func()) { p.submit(task{f: f}) }

// Run runs f on the pool and returns when f has returned, so the caller's
// own goroutine stays shallow. A panic in f is raised again in the caller
// (where net/http, for one, recovers it); unless its value is an error
// (http.ErrAbortHandler, for one) the panic carries the worker's stack,
// since the caller's would not show where it happened. Run returns once
// the worker is waiting again, so a Run right after it finds it.
func (p *Pool) Run(f func()) {
	done := make(chan any, 1)
	p.submit(task{f: f, done: done})
	if v := <-done; v != nil {
		panic(v)
	}
}

func (p *Pool) submit(t task) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.tasks <- t // buffered: the worker may not be receiving yet
		return
	}
	if p.workers < p.max {
		p.workers++
		p.started++
		p.mu.Unlock()
		go p.work(&worker{tasks: make(chan task, 1)}, t)
		return
	}
	p.mu.Unlock()
	go func() {
		v := call(t)
		if t.done != nil {
			t.done <- v
		}
	}()
}

// call runs t.f; for Run's tasks it recovers a panic and returns it.
func call(t task) (v any) {
	if t.done == nil {
		t.f()
		return nil
	}
	defer func() {
		if v = recover(); v != nil {
			if _, isErr := v.(error); !isErr {
				v = fmt.Sprintf("%v\n\ngoroutine of the pool:\n%s", v, debug.Stack())
			}
		}
	}()
	t.f()
	return nil
}

func (p *Pool) work(w *worker, t task) {
	timer := time.NewTimer(p.idleFor)
	defer timer.Stop()
	for {
		v := call(t)
		p.mu.Lock()
		p.idle = append(p.idle, w)
		p.mu.Unlock()
		if t.done != nil {
			t.done <- v
		}
		timer.Reset(p.idleFor)
		select {
		case t = <-w.tasks:
			continue
		case <-timer.C:
		}
		p.mu.Lock()
		for i, x := range p.idle {
			if x == w {
				p.idle = slices.Delete(p.idle, i, i+1)
				p.workers--
				p.mu.Unlock()
				return
			}
		}
		p.mu.Unlock()
		t = <-w.tasks // taken off the idle list as the timer fired: its task is coming
	}
}

// Workers is the number of workers now running or waiting.
func (p *Pool) Workers() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.workers
}

// Started is the number of workers ever started.
func (p *Pool) Started() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started
}
