package loadgen

import (
	"testing"
	"time"
)

func TestArrivalsHonourQPSAndBurst(t *testing.T) {
	start := time.Unix(1000, 0)
	for _, tc := range []struct {
		qps   float64
		burst int
		count int
	}{{10, 1, 20}, {10, 5, 30}, {100, 20, 200}, {0.5, 2, 6}} {
		got := Arrivals(tc.qps, tc.burst, tc.count, start)
		interval := time.Duration(float64(time.Second) / tc.qps)
		for i, at := range got {
			// The first burst goes at once; after it, one every 1/qps.
			want := start
			if i >= tc.burst {
				want = start.Add(time.Duration(i-tc.burst+1) * interval)
			}
			if d := at.Sub(want); d < -time.Microsecond || d > time.Microsecond {
				t.Fatalf("qps %v burst %d: write %d at +%v, want +%v", tc.qps, tc.burst, i, at.Sub(start), want.Sub(start))
			}
		}
		// In any window of length w at most burst + qps·w writes.
		for i := range got {
			for j := i; j < len(got); j++ {
				w := got[j].Sub(got[i]).Seconds()
				if n := j - i + 1; float64(n) > float64(tc.burst)+tc.qps*w+1e-6 {
					t.Fatalf("qps %v burst %d: %d writes in %.3fs", tc.qps, tc.burst, n, w)
				}
			}
		}
	}
}

func TestScheduleIdleRefillsBurst(t *testing.T) {
	start := time.Unix(1000, 0)
	s := NewSchedule(10, 3, start)
	for range 3 {
		if at := s.Next(start); !at.Equal(start) {
			t.Fatalf("burst write at +%v, want at once", at.Sub(start))
		}
	}
	if at := s.Next(start); at.Sub(start) != 100*time.Millisecond {
		t.Fatalf("4th write at +%v, want +100ms", at.Sub(start))
	}
	// After an idle second the bucket is full again (3 tokens, not 10).
	later := start.Add(2 * time.Second)
	for range 3 {
		if at := s.Next(later); !at.Equal(later) {
			t.Fatalf("after idle: write at +%v, want at once", at.Sub(later))
		}
	}
	if at := s.Next(later); at.Sub(later) != 100*time.Millisecond {
		t.Fatalf("after idle: 4th at +%v, want +100ms", at.Sub(later))
	}
}
