package prober

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Upstream's defaults, applied when a probe leaves a field zero (the
// apiserver normally defaults them).
const (
	defaultPeriod           = 10 * time.Second
	defaultTimeout          = time.Second
	defaultFailureThreshold = 3
	defaultSuccessThreshold = 1
)

// initial is what a probe reports before it has run for a container:
// readiness says not ready, liveness says alive, startup says not yet.
func initial(k Kind) Result {
	switch k {
	case Readiness:
		return Failure
	case Liveness:
		return Success
	}
	return Unknown
}

// state counts one probe's consecutive outcomes for one container and
// publishes a result once a threshold is met. It is pure: the worker feeds
// it outcomes.
type state struct {
	published Result
	last      Result
	count     int32
}

func newState(k Kind) state { return state{published: initial(k)} }

// observe takes one outcome and reports whether the published result
// changed. Unknown outcomes (the prober's own errors) are not counted.
func (s *state) observe(r Result, successThreshold, failureThreshold int32) bool {
	if r == Unknown {
		return false
	}
	if r == s.last {
		s.count++
	} else {
		s.last, s.count = r, 1
	}
	if r == Failure && s.count < failureThreshold || r == Success && s.count < successThreshold {
		return false
	}
	if s.published == r {
		return false
	}
	s.published = r
	return true
}

// thresholds returns a probe's success and failure thresholds with
// defaults; liveness and startup succeed after one success, as upstream
// validation demands.
func thresholds(p *corev1.Probe, k Kind) (success, failure int32) {
	success, failure = p.SuccessThreshold, p.FailureThreshold
	if success <= 0 || k != Readiness {
		success = defaultSuccessThreshold
	}
	if failure <= 0 {
		failure = defaultFailureThreshold
	}
	return success, failure
}

func period(p *corev1.Probe) time.Duration {
	if p.PeriodSeconds <= 0 {
		return defaultPeriod
	}
	return time.Duration(p.PeriodSeconds) * time.Second
}

func timeout(p *corev1.Probe) time.Duration {
	if p.TimeoutSeconds <= 0 {
		return defaultTimeout
	}
	return time.Duration(p.TimeoutSeconds) * time.Second
}

// nextRun is when a probe should next run for a container: not while the
// container is not running or the probe is on hold (a liveness or startup
// failure waits for the restart); first at startedAt + initialDelay, then
// every period after the last run. Zero means "wait to be told".
func nextRun(c Container, p *corev1.Probe, lastRun time.Time, onHold bool) time.Time {
	if !c.Running || c.ID == "" || onHold {
		return time.Time{}
	}
	first := c.StartedAt.Add(time.Duration(p.InitialDelaySeconds) * time.Second)
	if lastRun.IsZero() {
		return first
	}
	next := lastRun.Add(period(p))
	if next.Before(first) {
		return first
	}
	return next
}
