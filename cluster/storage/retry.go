package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Retry is how long the store waits for one etcd request, and for all of
// them, before it answers without etcd.
//
// When the etcd leader is lost, a write sent to a follower is forwarded to
// the dead leader and dropped: etcd answers it only at its own request
// timeout (5 s plus two election timeouts), and a write sent to the leader
// itself breaks with its connection. The store does not wait for that: an
// attempt that has not answered within Attempt is abandoned and the write is
// sent again, to whichever member answers (clientv3 balances over every
// endpoint). Every write is a transaction on a precondition (the key's
// absence, or the mod revision the caller read), so at most one of the
// attempts can apply. When a later attempt finds its precondition gone, the
// store asks etcd who wrote the key: if this write did (the bytes it wrote,
// at the key's creation or as the first change after the revision it read)
// the write succeeded; if it cannot tell, or another writer did, the answer
// is ErrUnavailable, never ErrConflict or ErrExists: those mean "nothing was
// written", and after an attempt without an answer the store does not know.
type Retry struct {
	// Attempt bounds one etcd request. Twice the election timeout is
	// enough for the followers to have noticed a dead leader and elected a
	// new one, so the second attempt lands; attempts after an unanswered
	// one are bounded by half of it.
	Attempt time.Duration
	// Budget bounds all the attempts of one operation; after it the
	// operation fails with ErrUnavailable.
	Budget time.Duration
}

// DefaultRetry suits etcd's default timing (election timeout 1 s).
var DefaultRetry = Retry{Attempt: 2 * time.Second, Budget: 8 * time.Second}

// ErrUnavailable: etcd did not answer within the budget, or a write's
// attempt went unanswered and whether it applied is unknown. The caller
// may try again later (the apiserver answers 504 with a Retry-After).
var ErrUnavailable = errors.New("etcd did not answer in time; the write may or may not have been applied")

// retriable reports whether err is etcd (or the connection to it) failing
// to answer, as opposed to an answer.
func retriable(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true // the attempt's deadline; the caller's is checked apart
	}
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		return ee.Code() == codes.Unavailable || errors.Is(ee, rpctypes.ErrTooManyRequests)
	}
	if s, ok := status.FromError(err); ok {
		switch s.Code() {
		case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
			return true
		case codes.Unknown:
			return strings.Contains(s.Message(), "proposal dropped")
		}
	}
	return false
}

// noSpace reports etcd refusing a write for its space quota.
func noSpace(err error) bool {
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		return errors.Is(ee, rpctypes.ErrNoSpace)
	}
	return errors.Is(rpctypes.Error(err), rpctypes.ErrNoSpace)
}

// NOSPACE is not always "not applied": until its alarm is raised (through
// raft, a moment later), etcd's quota applier applies each write over the
// quota and answers NOSPACE all the same; once it is raised, writes are
// refused unapplied. A write answered NOSPACE is therefore settled by
// reading, never by writing again: applied is success.

// settleCreate reports the revision of a create answered NOSPACE if it was
// applied after all (0 if it was not).
func (s *Store) settleCreate(ctx context.Context, key string, value []byte) (int64, error) {
	resp, err := s.cli.Get(ctx, key)
	if err != nil {
		return 0, err
	}
	if len(resp.Kvs) == 0 {
		return 0, nil
	}
	rev, err := s.createdBy(ctx, key, resp.Kvs[0], value)
	if errors.Is(err, errNotOurs) {
		return 0, nil
	}
	return rev, err
}

// settleSwap is settleCreate for a write conditional on modRev.
func (s *Store) settleSwap(ctx context.Context, key string, modRev int64, value []byte) (int64, error) {
	resp, err := s.cli.Get(ctx, key)
	if err != nil {
		return 0, err
	}
	if len(resp.Kvs) == 1 && resp.Kvs[0].ModRevision == modRev {
		return 0, nil // unchanged: not applied
	}
	rev, err := s.changedBy(ctx, key, modRev, value)
	if errors.Is(err, errNotOurs) {
		return 0, nil
	}
	return rev, err
}

// errNotOurs ends a retried write whose precondition failed and whose key
// was written by someone else, or by nobody etcd can still name.
var errNotOurs = errors.New("not ours")

// do runs one operation's attempts: op gets each attempt's context and
// whether an earlier attempt went unanswered (so a failed precondition
// may be its own doing). It returns op's first answer, or ErrUnavailable.
func (s *Store) do(ctx context.Context, opName, key string, op func(ctx context.Context, retried bool) error) error {
	r := s.retry
	deadline := time.Now().Add(r.Budget)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	backoff := 10 * time.Millisecond
	retried := false
	for {
		attempt := r.Attempt
		if retried {
			// By now the members have had a whole attempt's time to elect
			// a leader: a member that answers does so at once, and a
			// second silent one (the cut-off old leader, before it steps
			// down) costs half as much.
			attempt = r.Attempt / 2
		}
		if left := time.Until(deadline); left < attempt {
			attempt = left
		}
		// A member without a leader (one cut off from its peers, or all of
		// them mid-election) refuses at once instead of holding the
		// request until etcd's own timeout: the next attempt goes to a
		// member that has one.
		actx, cancel := context.WithTimeout(clientv3.WithRequireLeader(ctx), attempt)
		err := op(actx, retried)
		cancel()
		switch {
		case err == nil:
			if retried {
				s.retries.WithLabelValues(opName, "answered").Inc()
			}
			return nil
		case errors.Is(err, errNotOurs):
			s.retries.WithLabelValues(opName, "unknown").Inc()
			return fmt.Errorf("%s %s: another attempt may have applied: %w", opName, key, ErrUnavailable)
		case ctx.Err() != nil:
			return fmt.Errorf("etcd %s %s: %w", opName, key, ctx.Err())
		case noSpace(err):
			return fmt.Errorf("etcd %s %s: %w", opName, key, ErrNoSpace)
		case !retriable(err):
			return err
		}
		if !time.Now().Add(backoff).Before(deadline) {
			s.retries.WithLabelValues(opName, "unavailable").Inc()
			return fmt.Errorf("%s %s: %v: %w", opName, key, err, ErrUnavailable)
		}
		// An attempt that ended without an answer may still apply.
		retried = true
		select {
		case <-ctx.Done():
			return fmt.Errorf("etcd %s %s: %w", opName, key, ctx.Err())
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 200*time.Millisecond)
	}
}

// createdBy reports the revision of value's creation at key, if the key's
// current incarnation (kv) was created by a write of exactly value.
func (s *Store) createdBy(ctx context.Context, key string, kv *mvccpb.KeyValue, value []byte) (int64, error) {
	if kv == nil {
		// Created and deleted again since: by whom, history would have to
		// tell; the answer is "unknown".
		return 0, errNotOurs
	}
	if kv.ModRevision == kv.CreateRevision {
		if bytes.Equal(kv.Value, value) {
			return kv.CreateRevision, nil
		}
		return 0, errNotOurs
	}
	resp, err := s.cli.Get(ctx, key, clientv3.WithRev(kv.CreateRevision))
	if err != nil {
		if isCompacted(err) {
			return 0, errNotOurs
		}
		return 0, err
	}
	if len(resp.Kvs) == 1 && resp.Kvs[0].CreateRevision == kv.CreateRevision && bytes.Equal(resp.Kvs[0].Value, value) {
		return kv.CreateRevision, nil
	}
	return 0, errNotOurs
}

// changedBy reports the revision of the first change to key after modRev
// if that change was this write: a put of exactly value, or (value nil) a
// delete.
func (s *Store) changedBy(ctx context.Context, key string, modRev int64, value []byte) (int64, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for resp := range s.cli.Watch(wctx, key, clientv3.WithRev(modRev+1)) {
		if resp.CompactRevision != 0 {
			return 0, errNotOurs
		}
		if err := resp.Err(); err != nil {
			return 0, err
		}
		if len(resp.Events) == 0 {
			continue
		}
		ev := resp.Events[0]
		switch {
		case value == nil && ev.Type == mvccpb.DELETE,
			value != nil && ev.Type == mvccpb.PUT && bytes.Equal(ev.Kv.Value, value):
			return ev.Kv.ModRevision, nil
		}
		return 0, errNotOurs
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return 0, context.DeadlineExceeded
}
