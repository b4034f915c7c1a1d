package storage

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// KV is one stored value and the revision that last modified it.
type KV struct {
	Key    string
	Value  []byte
	ModRev int64
}

// Store performs the apiserver's operations on etcd. It is safe for
// concurrent use; it holds no state but the client.
type Store struct {
	cli     *clientv3.Client
	latency *prometheus.HistogramVec
}

// NewStore wraps an etcd client. reg may be nil; when set, the store
// registers etcd_request_duration_seconds{operation,type} on it.
func NewStore(cli *clientv3.Client, reg prometheus.Registerer) *Store {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "etcd_request_duration_seconds",
		Help:    "Latency of the apiserver's etcd requests by operation and resource type.",
		Buckets: []float64{.0005, .001, .002, .004, .008, .016, .032, .064, .128, .256, .512, 1.024, 2.048, 4.096},
	}, []string{"operation", "type"})
	if reg != nil {
		reg.MustRegister(h)
	}
	return &Store{cli: cli, latency: h}
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
	defer s.observe("create", key, time.Now())
	resp, err := s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(value))).
		Commit()
	if err != nil {
		return 0, fmt.Errorf("etcd create %s: %w", key, err)
	}
	if !resp.Succeeded {
		return 0, fmt.Errorf("%s: %w", key, ErrExists)
	}
	return resp.Header.Revision, nil
}

// Get reads key with a quorum read.
func (s *Store) Get(ctx context.Context, key string) (KV, error) {
	defer s.observe("get", key, time.Now())
	resp, err := s.cli.Get(ctx, key)
	if err != nil {
		return KV{}, fmt.Errorf("etcd get %s: %w", key, err)
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
	defer s.observe("update", key, time.Now())
	resp, err := s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", modRev)).
		Then(clientv3.OpPut(key, string(value))).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return 0, KV{}, fmt.Errorf("etcd update %s: %w", key, err)
	}
	if resp.Succeeded {
		return resp.Header.Revision, KV{}, nil
	}
	return 0, currentFromElse(key, resp), conflictOrGone(key, resp)
}

// Delete removes key if its mod revision is still modRev. On a conflict it
// returns ErrConflict and the current KV, like Update.
func (s *Store) Delete(ctx context.Context, key string, modRev int64) (int64, KV, error) {
	defer s.observe("delete", key, time.Now())
	resp, err := s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", modRev)).
		Then(clientv3.OpDelete(key)).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return 0, KV{}, fmt.Errorf("etcd delete %s: %w", key, err)
	}
	if resp.Succeeded {
		return resp.Header.Revision, KV{}, nil
	}
	return 0, currentFromElse(key, resp), conflictOrGone(key, resp)
}

func currentFromElse(key string, resp *clientv3.TxnResponse) KV {
	if len(resp.Responses) == 0 {
		return KV{}
	}
	r := resp.Responses[0].GetResponseRange()
	if r == nil || len(r.Kvs) == 0 {
		return KV{}
	}
	return KV{Key: key, Value: r.Kvs[0].Value, ModRev: r.Kvs[0].ModRevision}
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
		if isCompacted(err) {
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
	resp, err := s.cli.Get(ctx, "/registry/", clientv3.WithCountOnly(), clientv3.WithLimit(1))
	if err != nil {
		return 0, fmt.Errorf("etcd revision: %w", err)
	}
	return resp.Header.Revision, nil
}

func isCompacted(err error) bool {
	return err == rpctypes.ErrCompacted || strings.Contains(err.Error(), rpctypes.ErrCompacted.Error())
}

func isFutureRev(err error) bool {
	return err == rpctypes.ErrFutureRev || strings.Contains(err.Error(), rpctypes.ErrFutureRev.Error())
}
