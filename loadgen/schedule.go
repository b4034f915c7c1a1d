package loadgen

import (
	"time"

	"golang.org/x/time/rate"
)

// Schedule is the arrival schedule of a job's writes: a token bucket of qps
// tokens a second holding at most burst, full at the start. It is pure: the
// caller supplies the time, so tests drive it without a clock or a cluster.
// Not safe for concurrent use; Run calls it from one goroutine.
type Schedule struct {
	lim *rate.Limiter
}

// NewSchedule returns a schedule whose bucket is full at start.
func NewSchedule(qps float64, burst int, start time.Time) *Schedule {
	lim := rate.NewLimiter(rate.Limit(qps), burst)
	// Anchor the bucket at start (full) so the first reservation is not
	// measured from the zero time.
	lim.SetLimitAt(start, rate.Limit(qps))
	return &Schedule{lim: lim}
}

// Next reserves one token for a write that is ready to go at now and returns
// when it may be sent (now or later).
func (s *Schedule) Next(now time.Time) time.Time {
	r := s.lim.ReserveN(now, 1)
	return now.Add(r.DelayFrom(now))
}

// Arrivals is the send times of count writes when the sender is always ready:
// each write is ready the moment the one before it was sent.
func Arrivals(qps float64, burst, count int, start time.Time) []time.Time {
	s := NewSchedule(qps, burst, start)
	out := make([]time.Time, count)
	now := start
	for i := range out {
		now = s.Next(now)
		out[i] = now
	}
	return out
}
