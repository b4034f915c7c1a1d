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

	"github.com/kstep-dev/kstep/cluster/etcdadmin"
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

// ErrOutcomeUnknown is the ErrUnavailable of a write (create, update,
// delete): it may have applied. The apiserver answers it 504 without a
// Retry-After, as upstream answers a write that timed out: client-go sends
// again, unasked, any request answered with one, and a create or a binding
// sent again after it applied is told 409, which says it did not.
var ErrOutcomeUnknown = fmt.Errorf("%w (a write)", ErrUnavailable)

// unavailableErr is the ErrUnavailable an operation ends with.
func unavailableErr(opName string) error {
	switch opName {
	case "get", "revision":
		return ErrUnavailable
	}
	return ErrOutcomeUnknown
}

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
// whether it is a resend after an attempt that went unanswered (so a failed
// precondition may be that attempt's doing). It returns the first answer
// that settles the operation, or ErrUnavailable.
//
// An attempt unanswered within its bound is not abandoned: the first one
// runs until the budget, because a slow etcd (one that queues proposals
// under load) still answers it, and that answer settles the write where a
// resend could not (its precondition already gone, it would have to find
// the change in history). Resends go out beside it, one at a time, each
// cancelled when the next goes: at most two of an operation's requests are
// waited on at once, and etcd gets no more requests than one attempt at a
// time would send it.
func do[T any](s *Store, ctx context.Context, opName, key string, op func(ctx context.Context, retried bool) (T, error)) (T, error) {
	var zero T
	r := s.retry
	deadline := time.Now().Add(r.Budget)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	// A member without a leader (one cut off from its peers, or all of
	// them mid-election) refuses at once instead of holding the request
	// until etcd's own timeout: the next attempt goes to a member that has
	// one.
	octx, cancelAll := context.WithDeadline(clientv3.WithRequireLeader(ctx), deadline)
	defer cancelAll()
	type answer struct {
		v   T
		err error
		n   int // the attempt: 0 the first
	}
	answers := make(chan answer)
	launch := func(n int) context.CancelFunc {
		actx, cancel := context.WithCancel(octx)
		s.attempts.Go(func() {
			v, err := op(actx, n > 0)
			select {
			case answers <- answer{v, err, n}:
			case <-octx.Done():
			}
		})
		return cancel
	}
	bound := func(d time.Duration) time.Duration { return max(min(d, time.Until(deadline)), 0) }
	launch(0)
	latest := 0               // the newest attempt
	cancelLatest := func() {} // cancels it, unless it is the first
	timer := time.NewTimer(bound(r.Attempt))
	defer timer.Stop()
	launching := false // the timer is the backoff before the next resend
	backoff := 10 * time.Millisecond
	unavailable := func(why error) (T, error) {
		s.retries.WithLabelValues(opName, "unavailable").Inc()
		return zero, fmt.Errorf("%s %s: %v: %w", opName, key, why, unavailableErr(opName))
	}
	// resendAfterBackoff arms the timer for the next resend, or ends the
	// operation when the backoff would outlast the budget.
	resendAfterBackoff := func() bool {
		if !time.Now().Add(backoff).Before(deadline) {
			return false
		}
		timer.Reset(backoff)
		launching = true
		backoff = min(2*backoff, 200*time.Millisecond)
		return true
	}
	for {
		select {
		case <-ctx.Done():
			return zero, fmt.Errorf("etcd %s %s: %w", opName, key, ctx.Err())
		case a := <-answers:
			err := a.err
			switch {
			case err == nil:
				if latest > 0 {
					s.retries.WithLabelValues(opName, "answered").Inc()
				}
				return a.v, nil
			case errors.Is(err, errNotOurs):
				s.retries.WithLabelValues(opName, "unknown").Inc()
				return zero, fmt.Errorf("%s %s: another attempt may have applied: %w", opName, key, unavailableErr(opName))
			case ctx.Err() != nil:
				return zero, fmt.Errorf("etcd %s %s: %w", opName, key, ctx.Err())
			case noSpace(err):
				return zero, fmt.Errorf("etcd %s %s: %w", opName, key, ErrNoSpace)
			case !retriable(err) && a.n == 0 && latest > 0:
				// The first attempt's precondition failed after a resend
				// went out: that resend may be the change. Its own answer
				// settles the operation.
				continue
			case !retriable(err):
				return a.v, err // with what op found (a conflict's current object)
			case a.n != latest || launching:
				continue // an older attempt failed; a newer one is coming
			}
			// The newest attempt failed without an answer: resend after
			// the backoff.
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
			if !resendAfterBackoff() {
				return unavailable(err)
			}
		case <-timer.C:
			if launching {
				cancelLatest()
				latest++
				cancel := launch(latest)
				cancelLatest = cancel
				launching = false
				// By now the members have had a whole attempt's time to
				// elect a leader: a member that answers does so at once, and
				// a second silent one (the cut-off old leader, before it
				// steps down) costs half as much.
				timer.Reset(bound(r.Attempt / 2))
				continue
			}
			// The newest attempt went unanswered within its bound.
			if !resendAfterBackoff() {
				return unavailable(context.DeadlineExceeded)
			}
		}
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
		if etcdadmin.IsCompacted(err) {
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
