package apiserver

import (
	"net/http"
	"sync"
	"time"
)

// stallGuard bounds a watch stream's writes by WatchStallTimeout without
// bounding its idleness: the write deadline is armed while the handler
// writes and taken off once what it wrote has been flushed and it waits
// for the next event. A client that stops reading is cut after between
// half and all of the timeout; a quiet watch (no bookmarks asked for,
// nothing changing) stays open until its own timeout. On HTTP/2 a write
// deadline that passes resets the stream even when nothing is being
// written, so an idle stream must hold none.
//
// The cost per event is a clock read and, on a stream that goes idle
// between events, an uncontended lock: the deadline is moved on at most
// every half timeout (a deadline set per event would cost HTTP/2's serve
// loop a message each, and a timer reset each), and taken off by one timer
// per stream that fires a quarter timeout after it was set, only when the
// stream is idle then (busy: when it next goes idle). The three quarters
// left are the margin for a timer that runs late on a loaded machine: on
// HTTP/2 a deadline that passes first resets the idle stream (on HTTP/1.1
// it only fails a write, and the next write sets a new one first).
type stallGuard struct {
	rc    *http.ResponseController
	stall time.Duration

	// The handler goroutine's own view: while busy it alone moves the
	// deadline, so armed is what mu's armedAt holds.
	busy  bool
	armed time.Time

	mu sync.Mutex
	// armedAt is when the deadline (armedAt+stall) was set; zero: none is.
	armedAt time.Time
	// writing: the handler may be writing (busy, as the timer sees it).
	writing bool
	// late: the timer fired while the handler was writing; the deadline
	// comes off when it goes idle.
	late  bool
	done  bool
	timer *time.Timer
}

func newStallGuard(w http.ResponseWriter, stall time.Duration) *stallGuard {
	return &stallGuard{rc: http.NewResponseController(w), stall: stall}
}

// write is called before anything is written to the stream.
func (g *stallGuard) write() {
	if g.stall <= 0 {
		return
	}
	now := time.Now()
	if g.busy && now.Sub(g.armed) <= g.stall/2 {
		return
	}
	g.mu.Lock()
	g.busy, g.writing = true, true
	if g.armedAt.IsZero() || now.Sub(g.armedAt) > g.stall/2 {
		_ = g.rc.SetWriteDeadline(now.Add(g.stall))
		g.armedAt, g.late = now, false
		if g.timer == nil {
			g.timer = time.AfterFunc(g.stall/4, g.expire)
		} else {
			g.timer.Reset(g.stall / 4)
		}
	}
	g.armed = g.armedAt
	g.mu.Unlock()
}

// idle is called once everything written has been flushed.
func (g *stallGuard) idle() {
	if !g.busy {
		return
	}
	g.busy = false
	g.mu.Lock()
	g.writing = false
	if g.late {
		g.clearLocked()
	}
	g.mu.Unlock()
}

// expire runs a quarter timeout after the deadline was last set.
func (g *stallGuard) expire() {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.done || g.armedAt.IsZero():
	case g.writing:
		g.late = true
	default:
		g.clearLocked()
	}
}

func (g *stallGuard) clearLocked() {
	_ = g.rc.SetWriteDeadline(time.Time{})
	g.armedAt, g.late = time.Time{}, false
}

// stop is called before the handler returns: the ResponseWriter must not
// be touched after. A deadline still set bounds the end of the response
// (HTTP/1.1's last chunk); net/http takes it off after.
func (g *stallGuard) stop() {
	g.mu.Lock()
	g.done = true
	if g.timer != nil {
		g.timer.Stop()
	}
	g.mu.Unlock()
}
