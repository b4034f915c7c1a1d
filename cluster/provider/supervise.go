package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// RestartPolicy is how a supervisor brings actors back, like systemd's
// Restart=always: an actor that is not running is started again after a
// backoff that starts at Initial and doubles up to Max with every restart
// that did not last; a run of Stable or more resets it.
type RestartPolicy struct {
	Initial time.Duration `json:"initial"`
	Max     time.Duration `json:"max"`
	Stable  time.Duration `json:"stable"`
}

// DefaultRestart is systemd's RestartSec=100ms with a doubling backoff
// (Docker's restart policy has the same shape).
var DefaultRestart = RestartPolicy{Initial: 100 * time.Millisecond, Max: 10 * time.Second, Stable: 10 * time.Second}

// superviseTick is how often the supervisor looks at the actors: the
// resolution of "not running" (a restart waits for the backoff anyway).
const superviseTick = 100 * time.Millisecond

// Supervise keeps every actor of p running until ctx ends or the cluster
// is gone (ErrNoCluster): one not running is started (Provider.Start,
// which waits for it to be ready) after its backoff. It runs in the chaos
// engine when a scenario asks for supervision, and as `kstep supervise`,
// the process `kstep up -d` leaves behind on the process provider (on
// docker, each container's restart policy does this, in dockerd). Each
// restart is a line on log.
func Supervise(ctx context.Context, p Provider, policy RestartPolicy, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	type state struct {
		backoff  time.Duration
		downAt   time.Time // when it was first seen not running
		upAt     time.Time // when it last came back
		starting bool
	}
	type started struct {
		name   string
		downAt time.Time
		err    error
	}
	states := map[string]*state{}
	// Starts run side by side: a restarted etcd member is ready only once
	// a quorum is, so one start must not wait for another.
	done := make(chan started)
	inflight := 0
	defer func() {
		for ; inflight > 0; inflight-- {
			<-done
		}
	}()
	t := time.NewTicker(superviseTick)
	defer t.Stop()
	for {
		actors := p.Actors()
		if len(actors) == 0 {
			return fmt.Errorf("supervise: %w", ErrNoCluster)
		}
		now := time.Now()
		for _, a := range actors {
			s := states[a.Name]
			if s == nil {
				s = &state{backoff: policy.Initial, upAt: now}
				states[a.Name] = s
			}
			if s.starting {
				continue
			}
			if a.Running() {
				s.downAt = time.Time{}
				if now.Sub(s.upAt) >= policy.Stable {
					s.backoff = policy.Initial
				}
				continue
			}
			if s.downAt.IsZero() {
				s.downAt = now
				fmt.Fprintf(log, "supervise: %s is not running; starting it in %v\n", a.Name, s.backoff)
			}
			if now.Sub(s.downAt) < s.backoff {
				continue
			}
			s.starting = true
			inflight++
			go func(name string, downAt time.Time) {
				done <- started{name, downAt, p.Start(ctx, name)}
			}(a.Name, s.downAt)
		}
		for drained := false; !drained; {
			select {
			case r := <-done:
				inflight--
				s := states[r.name]
				s.starting = false
				switch {
				case ctx.Err() != nil:
				case r.err == nil:
					fmt.Fprintf(log, "supervise: %s running again, %v after it went down\n", r.name, time.Since(r.downAt).Round(time.Millisecond))
				case errors.Is(r.err, ErrActorRunning):
					// Started by someone else meanwhile.
				default:
					fmt.Fprintf(log, "supervise: %s: %v\n", r.name, r.err)
				}
				s.upAt, s.downAt = time.Now(), time.Time{}
				s.backoff = min(2*s.backoff, policy.Max)
			default:
				drained = true
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
