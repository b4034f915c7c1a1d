package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kstep-dev/kstep/cluster/etcdadmin"
	"github.com/kstep-dev/kstep/internal/util/gopool"
)

// KV is one stored value and the revision that last modified it.
type KV struct {
	Key    string
	Value  []byte
	ModRev int64
}

// Store performs the apiserver's operations on etcd. It is safe for
// concurrent use; it holds no state but the client (and idle goroutines
// for its attempts).
type Store struct {
	cli     *clientv3.Client
	latency *prometheus.HistogramVec
	retries *prometheus.CounterVec
	defrags prometheus.Counter
	retry   Retry
	// route, when set (RouteWritesToLeader), sends writes to the leader.
	route         *leaderRoute
	leaderLookups *prometheus.CounterVec
	// attempts runs each etcd attempt (retry.go) on a goroutine whose
	// stack the attempts before it grew (the gRPC client's call is deep).
	attempts *gopool.Pool
}

const (
	// maxAttemptWorkers bounds the goroutines kept for etcd attempts;
	// attempts beyond it run on goroutines of their own.
	maxAttemptWorkers = 1024
	// attemptWorkerIdle: such a goroutine with no attempt for this long ends.
	attemptWorkerIdle = 10 * time.Second
)

// NewStore wraps an etcd client, with DefaultRetry. reg may be nil; when
// set, the store registers etcd_request_duration_seconds{operation,type}
// kstep_etcd_retried_requests_total{operation,outcome},
// kstep_etcd_defragmentations_total and kstep_etcd_leader_lookups_total{result}
// on it.
func NewStore(cli *clientv3.Client, reg prometheus.Registerer) *Store {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "etcd_request_duration_seconds",
		Help:    "Latency of the apiserver's etcd requests by operation and resource type, retries included.",
		Buckets: []float64{.0005, .001, .002, .004, .008, .016, .032, .064, .128, .256, .512, 1.024, 2.048, 4.096},
	}, []string{"operation", "type"})
	r := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kstep_etcd_retried_requests_total",
		Help: "etcd operations that needed more than one attempt, by how they ended: answered (by a later attempt, or found applied), unknown (a failed precondition after an unanswered attempt, not this write's doing as far as etcd can tell), unavailable (no answer within the budget).",
	}, []string{"operation", "outcome"})
	d := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kstep_etcd_defragmentations_total",
		Help: "etcd members this apiserver defragmented after a compaction, their file more than --etcd-defrag-threshold unused.",
	})
	l := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kstep_etcd_leader_lookups_total",
		Help: "Times the apiserver asked the etcd members which leads, to send writes to the leader, by result: found (writes go to it), none (no member said it leads; writes go to any member meanwhile).",
	}, []string{"result"})
	if reg != nil {
		reg.MustRegister(h, r, d, l)
	}
	return &Store{cli: cli, latency: h, retries: r, defrags: d, retry: DefaultRetry, leaderLookups: l,
		attempts: gopool.New(maxAttemptWorkers, attemptWorkerIdle)}
}

// SetRetry sets the attempt and budget bounds (before the store is used).
func (s *Store) SetRetry(r Retry) {
	if r.Attempt <= 0 {
		r.Attempt = DefaultRetry.Attempt
	}
	if r.Budget < r.Attempt {
		r.Budget = max(r.Attempt, DefaultRetry.Budget)
	}
	s.retry = r
}

// Client exposes the etcd client to the watch cache of this package.
func (s *Store) Client() *clientv3.Client { return s.cli }

func (s *Store) observe(op, key string, start time.Time) {
	s.latency.WithLabelValues(op, typeOf(key)).Observe(time.Since(start).Seconds())
}

// typeOf returns the resource segment of /registry/<resource>/... keys, the
// label etcd latency is broken down by.
func typeOf(key string) string {
	k := strings.TrimPrefix(key, "/registry/")
	if i := strings.IndexByte(k, '/'); i >= 0 {
		return k[:i]
	}
	return k
}

// Create writes value at key if and only if key is absent.
// It returns the revision of the write, which is the object's resourceVersion.
func (s *Store) Create(ctx context.Context, key string, value []byte) (int64, error) {
	return s.CreateWith(ctx, key, value)
}

// CreateWith is Create that writes each of sides beside the object (a
// Service's cluster IP, which only one Service may hold) in the same
// transaction: all of them are written, or none is, at one revision and
// one Raft commit. The object's own key present is ErrExists, as in
// Create; a side key present is ErrSideExists (nothing was written).
func (s *Store) CreateWith(ctx context.Context, key string, value []byte, sides ...KV) (int64, error) {
	defer s.observe("create", key, time.Now())
	cmps, puts, gets := sideOps(clientv3.Compare(clientv3.CreateRevision(key), "=", 0), clientv3.OpPut(key, string(value)), key, sides)
	rev, err := do(s, ctx, "create", key, func(ctx context.Context, retried bool) (int64, error) {
		resp, err := s.writer(retried).Txn(ctx).If(cmps...).Then(puts...).Else(gets...).Commit()
		if err != nil {
			return 0, fmt.Errorf("etcd create %s: %w", key, err)
		}
		s.sawTerm(resp.Header.RaftTerm)
		if resp.Succeeded {
			return resp.Header.Revision, nil
		}
		if own := elseKV(resp); own != nil || len(sides) == 0 {
			if !retried {
				return 0, fmt.Errorf("%s: %w", key, ErrExists)
			}
			return s.createdBy(ctx, key, own, value)
		}
		// The object's key is absent: a side key failed the precondition.
		side, stored := heldSide(resp, sides)
		if side == nil || (retried && bytes.Equal(stored, side.Value)) {
			// Maybe this write's own side key, its object deleted
			// since: whose it is, history would tell. (No side held
			// is not reached: the compares and the reads see one
			// revision.)
			return 0, errNotOurs
		}
		return 0, fmt.Errorf("%s beside %s: %w", side.Key, key, ErrSideExists)
	})
	if errors.Is(err, ErrNoSpace) {
		if r, serr := s.settleCreate(ctx, key, value); serr != nil {
			return 0, fmt.Errorf("%w (and reading whether it applied: %v)", err, serr)
		} else if r != 0 {
			return r, nil
		}
	}
	return rev, err
}

// Get reads key with a quorum read.
func (s *Store) Get(ctx context.Context, key string) (KV, error) {
	defer s.observe("get", key, time.Now())
	resp, err := do(s, ctx, "get", key, func(ctx context.Context, _ bool) (*clientv3.GetResponse, error) {
		resp, err := s.cli.Get(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("etcd get %s: %w", key, err)
		}
		return resp, nil
	})
	if err != nil {
		return KV{}, err
	}
	if len(resp.Kvs) == 0 {
		return KV{}, fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	kv := resp.Kvs[0]
	return KV{Key: key, Value: kv.Value, ModRev: kv.ModRevision}, nil
}

// Update writes value at key if the key's mod revision is still modRev.
// On a conflict it returns ErrConflict together with the current KV, so the
// caller can retry without reading again; if the key is gone, ErrNotFound.
func (s *Store) Update(ctx context.Context, key string, value []byte, modRev int64) (int64, KV, error) {
	return s.UpdateWith(ctx, key, value, modRev, nil, nil)
}

// UpdateWith is Update that, in the same transaction, creates each of
// sides (absent ones only: one held already fails the update with
// ErrSideExists and writes nothing) and removes each of gone: a Service
// whose update takes a cluster IP or gives one up.
func (s *Store) UpdateWith(ctx context.Context, key string, value []byte, modRev int64, sides []KV, gone []string) (int64, KV, error) {
	defer s.observe("update", key, time.Now())
	return s.swap(ctx, "update", key, clientv3.OpPut(key, string(value)), sides, gone, value, modRev)
}

// Delete removes key if its mod revision is still modRev, and with it each
// of sides (keys written beside the object by CreateWith; absent ones are
// no error) in the same transaction. On a conflict it returns ErrConflict
// and the current KV, like Update, and removes nothing.
func (s *Store) Delete(ctx context.Context, key string, modRev int64, sides ...string) (int64, KV, error) {
	defer s.observe("delete", key, time.Now())
	return s.swap(ctx, "delete", key, clientv3.OpDelete(key), nil, sides, nil, modRev)
}

// swap applies own (a put of value, or a delete when value is nil) if
// key's mod revision is still modRev and each of sides is absent, and in
// the same transaction writes sides and removes gone.
func (s *Store) swap(ctx context.Context, opName, key string, own clientv3.Op, sides []KV, gone []string, value []byte, modRev int64) (int64, KV, error) {
	// An attempt's answer: the revision written, or the key as the failed
	// precondition found it.
	type swapped struct {
		rev int64
		cur KV
	}
	cmps, then, gets := sideOps(clientv3.Compare(clientv3.ModRevision(key), "=", modRev), own, key, sides)
	for _, k := range gone {
		then = append(then, clientv3.OpDelete(k))
	}
	res, err := do(s, ctx, opName, key, func(ctx context.Context, retried bool) (swapped, error) {
		resp, err := s.writer(retried).Txn(ctx).If(cmps...).Then(then...).Else(gets...).Commit()
		if err != nil {
			return swapped{}, fmt.Errorf("etcd %s %s: %w", opName, key, err)
		}
		s.sawTerm(resp.Header.RaftTerm)
		if resp.Succeeded {
			return swapped{rev: resp.Header.Revision}, nil
		}
		if kv := elseKV(resp); kv != nil && kv.ModRevision == modRev {
			// The key is as the caller read it, so no attempt of this
			// write applied: a side key is held.
			if side, _ := heldSide(resp, sides); side != nil {
				return swapped{}, fmt.Errorf("%s beside %s: %w", side.Key, key, ErrSideExists)
			}
		}
		if retried {
			// An unanswered attempt may have been the change.
			rev, err := s.changedBy(ctx, key, modRev, value)
			return swapped{rev: rev}, err
		}
		return swapped{cur: currentFromElse(key, resp)}, conflictOrGone(key, resp)
	})
	rev, cur := res.rev, res.cur
	if errors.Is(err, ErrNoSpace) && value != nil {
		if r, serr := s.settleSwap(ctx, key, modRev, value); serr != nil {
			err = fmt.Errorf("%w (and reading whether it applied: %v)", err, serr)
		} else if r != 0 {
			return r, KV{}, nil
		}
	}
	if err != nil {
		return 0, cur, err
	}
	return rev, KV{}, nil
}

// sideOps is a transaction on the object at key (its compare cmp and its
// operation op) with sides beside it: each side key absent, put, and read
// back by the Else branch after the object's own read (heldSide).
func sideOps(cmp clientv3.Cmp, op clientv3.Op, key string, sides []KV) (cmps []clientv3.Cmp, then, gets []clientv3.Op) {
	cmps = append(make([]clientv3.Cmp, 0, 1+len(sides)), cmp)
	then = append(make([]clientv3.Op, 0, 1+len(sides)), op)
	gets = append(make([]clientv3.Op, 0, 1+len(sides)), clientv3.OpGet(key))
	for _, kv := range sides {
		cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(kv.Key), "=", 0))
		then = append(then, clientv3.OpPut(kv.Key, string(kv.Value)))
		gets = append(gets, clientv3.OpGet(kv.Key))
	}
	return cmps, then, gets
}

// heldSide is the first of sides that a failed sideOps transaction found
// present, with the value stored there; nil if none.
func heldSide(resp *clientv3.TxnResponse, sides []KV) (*KV, []byte) {
	for i := range sides {
		if r := resp.Responses[1+i].GetResponseRange(); r != nil && len(r.Kvs) > 0 {
			return &sides[i], r.Kvs[0].Value
		}
	}
	return nil, nil
}

// elseKV is the key as the Else branch's OpGet read it, nil if absent.
func elseKV(resp *clientv3.TxnResponse) *mvccpb.KeyValue {
	if len(resp.Responses) == 0 {
		return nil
	}
	r := resp.Responses[0].GetResponseRange()
	if r == nil || len(r.Kvs) == 0 {
		return nil
	}
	return r.Kvs[0]
}

func currentFromElse(key string, resp *clientv3.TxnResponse) KV {
	kv := elseKV(resp)
	if kv == nil {
		return KV{}
	}
	return KV{Key: key, Value: kv.Value, ModRev: kv.ModRevision}
}

func conflictOrGone(key string, resp *clientv3.TxnResponse) error {
	if currentFromElse(key, resp).ModRev == 0 {
		return fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	return fmt.Errorf("%s: %w", key, ErrConflict)
}

// ListResult is one page of a range read.
type ListResult struct {
	KVs []KV
	// Rev is the revision the page was read at; later pages use the same one.
	Rev int64
	// More says keys remain after the last one returned.
	More bool
}

// List reads the keys under prefix, starting at startKey (or the prefix
// itself when empty), at revision rev (0: the current one), at most limit keys
// (0: all). Reading a compacted revision returns ErrCompacted.
func (s *Store) List(ctx context.Context, prefix, startKey string, rev, limit int64) (ListResult, error) {
	defer s.observe("list", prefix, time.Now())
	if startKey == "" {
		startKey = prefix
	}
	opts := []clientv3.OpOption{clientv3.WithRange(clientv3.GetPrefixRangeEnd(prefix))}
	if rev > 0 {
		opts = append(opts, clientv3.WithRev(rev))
	}
	if limit > 0 {
		opts = append(opts, clientv3.WithLimit(limit))
	}
	resp, err := s.cli.Get(ctx, startKey, opts...)
	if err != nil {
		if etcdadmin.IsCompacted(err) {
			return ListResult{}, fmt.Errorf("list %s at %d: %w", prefix, rev, ErrCompacted)
		}
		if isFutureRev(err) {
			return ListResult{}, fmt.Errorf("list %s at %d: %w", prefix, rev, ErrTooLarge)
		}
		return ListResult{}, fmt.Errorf("etcd list %s: %w", prefix, err)
	}
	out := ListResult{Rev: resp.Header.Revision, More: resp.More, KVs: make([]KV, len(resp.Kvs))}
	if rev > 0 {
		out.Rev = rev
	}
	for i, kv := range resp.Kvs {
		out.KVs[i] = KV{Key: string(kv.Key), Value: kv.Value, ModRev: kv.ModRevision}
	}
	return out, nil
}

// DeletePrefix removes every key under prefix and returns how many went.
func (s *Store) DeletePrefix(ctx context.Context, prefix string) (int64, error) {
	defer s.observe("delete", prefix, time.Now())
	resp, err := s.cli.Delete(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return 0, fmt.Errorf("etcd delete prefix %s: %w", prefix, err)
	}
	return resp.Deleted, nil
}

// Remove deletes key unconditionally; removing an absent key is not an error.
func (s *Store) Remove(ctx context.Context, key string) error {
	defer s.observe("delete", key, time.Now())
	if _, err := s.cli.Delete(ctx, key); err != nil {
		return fmt.Errorf("etcd delete %s: %w", key, err)
	}
	return nil
}

// Revision returns etcd's current revision, read with a quorum read.
func (s *Store) Revision(ctx context.Context) (int64, error) {
	resp, err := do(s, ctx, "revision", "/registry/", func(ctx context.Context, _ bool) (*clientv3.GetResponse, error) {
		resp, err := s.cli.Get(ctx, "/registry/", clientv3.WithCountOnly(), clientv3.WithLimit(1))
		if err != nil {
			return nil, fmt.Errorf("etcd revision: %w", err)
		}
		return resp, nil
	})
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}

func isFutureRev(err error) bool {
	return err == rpctypes.ErrFutureRev || strings.Contains(err.Error(), rpctypes.ErrFutureRev.Error())
}
