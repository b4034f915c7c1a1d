package chaos

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kstep-dev/kstep/cluster/etcdadmin"
)

// FillResult is what a fill fault wrote to reach etcd's space quota, and
// how the cluster was brought back.
type FillResult struct {
	// StartedAt is when the filler began writing; the fault's InjectedAt is
	// when the first of its writes was refused for the quota (etcd's
	// NOSPACE alarm raised).
	StartedAt time.Time `json:"started_at"`
	// Objects and Bytes are the filler objects acknowledged and the bytes
	// of their data.
	Objects int   `json:"objects"`
	Bytes   int64 `json:"bytes"`
	// Refusal is the apiserver's answer that ended the fill.
	Refusal string `json:"refusal,omitempty"`
	// Deleted are the filler objects deleted as the recovery's first step
	// (deletes are accepted under NOSPACE; the space comes back with the
	// compaction).
	Deleted int `json:"deleted"`
	// HistoryReadMS is the time the engine spent, within the recovery,
	// reading etcd's history up to the compaction revision for the
	// lost-write and watch-gap checks: the engine's cost, not the cluster's.
	HistoryReadMS float64 `json:"history_read_ms"`
	// Recovery is the compaction, defragmentation and disarm.
	Recovery *etcdadmin.Recovery `json:"recovery,omitempty"`
	// RecoveredMS is from the start of the recovery to the first probe
	// write acknowledged after it.
	RecoveredMS *float64 `json:"recovered_ms"`
}

const (
	// fillNamespace holds the filler's ConfigMaps.
	fillNamespace = "kstep-chaos-fill"
	// fillObjectBytes is each filler ConfigMap's data: well under etcd's
	// and the apiserver's request limits (1.5 MiB), so every one is a
	// write the cluster accepts until the quota is full.
	fillObjectBytes = 768 << 10
	// fillWriters and fillDeleters are the filler's writes and the
	// recovery's deletes in flight.
	fillWriters  = 2
	fillDeleters = 4
	// fillTimeout bounds the fill: a quota not reached by then is a
	// scenario whose quota is too large for its run.
	fillTimeout = 3 * time.Minute
	// defaultQuota is etcd's own default space quota.
	defaultQuota = 2 << 30
)

// noSpace reports whether err is the apiserver's answer for a write etcd
// refused for its space quota: 507 with etcd's message (or a 500 with it,
// as upstream answers).
func noSpace(err error) bool {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return false
	}
	return noSpaceAnswer(st.Status().Code, st.Status().Message)
}

// noSpaceAnswer is noSpace on an answer's status code and message.
func noSpaceAnswer(code int32, msg string) bool {
	return (code == http.StatusInsufficientStorage || code == http.StatusInternalServerError) &&
		strings.Contains(msg, etcdadmin.ErrNoSpace.Error())
}

// fill writes incompressible ConfigMaps through the apiservers until one is
// refused for the quota, and returns when it is: the fault's injection.
// The load and the probe go on meanwhile: the quota fills under load.
func (r *run) fill(ctx context.Context, fr *FaultResult) error {
	res := &FillResult{StartedAt: time.Now()}
	fr.Fill = res
	if _, err := r.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fillNamespace}},
		metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", fillNamespace, err)
	}
	quota := r.sc.Cluster.Etcd.QuotaBackendBytes
	if quota == 0 {
		quota = defaultQuota
	}
	fctx, cancel := context.WithTimeout(ctx, fillTimeout)
	defer cancel()
	var mu sync.Mutex
	var refusedAt time.Time
	var errs []error
	next := 0
	// take hands out the next object's name until the quota is refused
	// or twice the quota is written (etcd would have refused long before).
	take := func() (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		if !refusedAt.IsZero() || len(errs) > 0 || int64(next)*fillObjectBytes >= 2*quota {
			return "", false
		}
		next++
		return fmt.Sprintf("fill-%d", next-1), true
	}
	var wg sync.WaitGroup
	for range fillWriters {
		wg.Go(func() {
			buf := make([]byte, fillObjectBytes)
			for fctx.Err() == nil {
				name, ok := take()
				if !ok {
					return
				}
				_, _ = rand.Read(buf)
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: fillNamespace},
					Data: map[string]string{"v": fillText(buf)}}
				_, err := r.cs.CoreV1().ConfigMaps(fillNamespace).Create(fctx, cm, metav1.CreateOptions{})
				mu.Lock()
				switch {
				case err == nil:
					res.Objects++
					res.Bytes += fillObjectBytes
				case noSpace(err):
					if refusedAt.IsZero() {
						refusedAt = time.Now()
						res.Refusal = err.Error()
					}
				case apierrors.IsAlreadyExists(err):
					// An attempt retried by the client landed.
					res.Objects++
					res.Bytes += fillObjectBytes
				case fctx.Err() == nil:
					errs = append(errs, fmt.Errorf("filler write %s: %w", name, err))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	switch {
	case !refusedAt.IsZero():
		fr.InjectedAt = refusedAt
		r.logf("%s: etcd's quota (%d MiB) refused a write after %d filler objects (%d MiB) in %v: %s", fr.Name, quota>>20,
			res.Objects, res.Bytes>>20, refusedAt.Sub(res.StartedAt).Round(time.Millisecond), res.Refusal)
		return nil
	case len(errs) > 0:
		return errors.Join(errs...)
	}
	return fmt.Errorf("etcd's quota was not reached: %d filler objects (%d MiB) acknowledged in %v (quota %d MiB)",
		res.Objects, res.Bytes>>20, time.Since(res.StartedAt).Round(time.Second), quota>>20)
}

// fillText is buf as letters: valid UTF-8 for a ConfigMap's data, and as
// incompressible as the random bytes behind it (etcd stores it as is).
func fillText(buf []byte) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
	b := make([]byte, len(buf))
	for i, c := range buf {
		b[i] = letters[c&63]
	}
	return string(b)
}

// unfill is an operator's recovery from NOSPACE: delete what filled the
// quota, then compact, defragment and disarm (etcdadmin.Recover, what
// `kstep etcd recover` does). The engine first reads etcd's history up to
// the compaction revision, which the compaction drops.
func (r *run) unfill(ctx context.Context, fr *FaultResult) error {
	res := fr.Fill
	l, err := r.cs.CoreV1().ConfigMaps(fillNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list the filler: %w", err)
	}
	// Deleted in parallel, as a garbage collector would: one by one, each
	// a large object read and answered, they take seconds.
	names := make(chan string)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for range fillDeleters {
		wg.Go(func() {
			for name := range names {
				err := r.cs.CoreV1().ConfigMaps(fillNamespace).Delete(ctx, name, metav1.DeleteOptions{})
				mu.Lock()
				if err != nil && !apierrors.IsNotFound(err) {
					errs = append(errs, fmt.Errorf("delete filler %s: %w", name, err))
				} else {
					res.Deleted++
				}
				mu.Unlock()
			}
		})
	}
	for _, cm := range l.Items {
		names <- cm.Name
	}
	close(names)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	deleted := time.Now()
	rev, err := r.history.Keep(ctx)
	if err != nil {
		return err
	}
	kept := time.Now()
	res.HistoryReadMS = float64(r.history.KeptIn()) / float64(time.Millisecond)
	rec, err := r.etcd.recover(ctx, rev, slog.New(slog.NewTextHandler(logWriter(r.logf), nil)))
	res.Recovery = &rec
	if err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	var before, after int64
	for _, m := range rec.Before {
		before = max(before, m.DBSize)
	}
	for _, m := range rec.After {
		after = max(after, m.DBSize)
	}
	r.logf("%s: %d filler objects deleted in %v; history read in %v; compacted to %d, defragmented (largest member %.1f → %.1f MiB) and %d NOSPACE alarm(s) disarmed in %v",
		fr.Name, res.Deleted, deleted.Sub(fr.UndoneAt).Round(time.Millisecond), r.history.KeptIn().Round(time.Millisecond), rec.CompactedTo,
		float64(before)/(1<<20), float64(after)/(1<<20), rec.Disarmed, time.Since(kept).Round(time.Millisecond))
	return nil
}
