package prober

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestStateThresholds(t *testing.T) {
	s := newState(Readiness)
	if s.published != Failure {
		t.Fatal("readiness starts not ready")
	}
	steps := []struct {
		r       Result
		changed bool
		want    Result
	}{
		{Success, false, Failure}, // success threshold 2: one is not enough
		{Success, true, Success},
		{Failure, false, Success}, // failure threshold 3
		{Unknown, false, Success}, // errors are not counted
		{Failure, false, Success},
		{Success, false, Success}, // the run of failures is broken
		{Failure, false, Success},
		{Failure, false, Success},
		{Failure, true, Failure},
	}
	for i, st := range steps {
		if got := s.observe(st.r, 2, 3); got != st.changed || s.published != st.want {
			t.Fatalf("step %d (%v): changed=%v published=%v, want %v %v", i, st.r, got, s.published, st.changed, st.want)
		}
	}
	if newState(Liveness).published != Success || newState(Startup).published != Unknown {
		t.Error("initial results")
	}
}

func TestThresholdDefaults(t *testing.T) {
	s, f := thresholds(&corev1.Probe{SuccessThreshold: 3}, Liveness)
	if s != 1 || f != 3 {
		t.Errorf("liveness %d %d", s, f)
	}
	s, f = thresholds(&corev1.Probe{SuccessThreshold: 3, FailureThreshold: 1}, Readiness)
	if s != 3 || f != 1 {
		t.Errorf("readiness %d %d", s, f)
	}
}

func TestNextRun(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &corev1.Probe{InitialDelaySeconds: 5, PeriodSeconds: 2}
	c := Container{ID: "c", Running: true, StartedAt: start}
	if got := nextRun(c, p, time.Time{}, false); !got.Equal(start.Add(5 * time.Second)) {
		t.Errorf("first run %v, want start+initialDelay", got)
	}
	if got := nextRun(c, p, start.Add(6*time.Second), false); !got.Equal(start.Add(8 * time.Second)) {
		t.Errorf("next run %v, want last+period", got)
	}
	if got := nextRun(c, p, start.Add(time.Second), false); !got.Equal(start.Add(5 * time.Second)) {
		t.Errorf("run %v before the initial delay", got)
	}
	if !nextRun(c, p, time.Time{}, true).IsZero() || !nextRun(Container{ID: "c"}, p, time.Time{}, false).IsZero() {
		t.Error("a probe on hold or of a stopped container must wait")
	}
	if got := nextRun(c, &corev1.Probe{}, start, false); !got.Equal(start.Add(10 * time.Second)) {
		t.Errorf("default period: %v", got)
	}
}

func TestResolvePort(t *testing.T) {
	c := &corev1.Container{Name: "app", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}
	for in, want := range map[string]int{"http": 8080, "9090": 9090} {
		if got, err := resolvePort(intstr.FromString(in), c); err != nil || got != want {
			t.Errorf("%s: %d %v", in, got, err)
		}
	}
	if _, err := resolvePort(intstr.FromString("grpc"), c); err == nil {
		t.Error("unknown port name resolved")
	}
	if got, _ := resolvePort(intstr.FromInt32(81), c); got != 81 {
		t.Error("numeric port")
	}
}
