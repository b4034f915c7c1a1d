package storage

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/connectivity"
)

// Writes go to the Raft leader. A write etcd receives on a follower is
// forwarded to the leader (a proposal message), committed there, and
// answered by the follower only once the leader has told it the new
// commit index and it has applied the entry itself: two hops between
// members more than the same write sent to the leader, on every write of
// the eight-step path (a bare put on the kstep cluster: p50 3.1 ms on the
// leader against 3.6 ms on a follower, p90 4.7 against 6.0-6.3 ms, on a
// slow day of the 2-core machine). clientv3 spreads requests over every
// endpoint, so two writes in three went through a follower.
//
// leaderRoute keeps a client per endpoint and pins the one whose member
// says, itself, that it leads. Only a write's first attempt uses the pin:
// a resend (the first went unanswered, or failed without an answer) goes
// through the store's own client, which balances over every member as
// before, and makes the route look again, unpinned meanwhile. The route
// looks again, too, when an answer carries a Raft term newer than the one
// the pin was found in (a new leader was elected: the pinned member still
// answers, as a follower, until the lookup moves the pin), and when the
// pinned connection is not ready (the member died: its writes go through
// the store's client at once). No timer polls: a lookup is one Status
// request per member, made only when one of these says the leader may
// have changed.
type leaderRoute struct {
	eps      []string
	template clientv3.Config
	pin      atomic.Pointer[clientv3.Client] // nil: no leader known
	term     atomic.Uint64                   // the term the pin was found in; 0: none
	kick     chan struct{}
	lookups  *prometheus.CounterVec

	mu      sync.Mutex
	clients map[string]*clientv3.Client
}

// RouteWritesToLeader sends the first attempt of every write to the etcd
// leader (leaderRoute) until ctx ends. cfg is the client configuration
// (timeouts, message sizes) of the per-member clients; its endpoints are
// the store client's. A store with one endpoint has nothing to route. It
// must be called before the store is used.
func (s *Store) RouteWritesToLeader(ctx context.Context, cfg clientv3.Config) {
	eps := s.cli.Endpoints()
	if len(eps) < 2 {
		return
	}
	cfg.DialTimeout = 0 // never block the lookup on a member that is down
	r := &leaderRoute{eps: eps, template: cfg, kick: make(chan struct{}, 1), lookups: s.leaderLookups, clients: map[string]*clientv3.Client{}}
	s.route = r
	r.look()
	go r.run(ctx)
}

// writer is the client a write's attempt goes through: the leader's for a
// first attempt when it is known and connected, else the store's.
func (s *Store) writer(retried bool) *clientv3.Client {
	r := s.route
	if r == nil {
		return s.cli
	}
	if retried {
		r.unpin()
		return s.cli
	}
	c := r.pin.Load()
	if c == nil {
		return s.cli
	}
	if c.ActiveConnection().GetState() != connectivity.Ready {
		r.unpin()
		return s.cli
	}
	return c
}

// sawTerm is told the Raft term of every write's answer.
func (s *Store) sawTerm(term uint64) {
	if r := s.route; r != nil && term > r.term.Load() {
		r.look()
	}
}

// look asks for a lookup (at most one waits).
func (r *leaderRoute) look() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// unpin sends writes through the store's client until a lookup finds the
// leader again.
func (r *leaderRoute) unpin() {
	if r.pin.Swap(nil) != nil {
		r.term.Store(0)
	}
	r.look()
}

func (r *leaderRoute) run(ctx context.Context) {
	defer func() {
		r.pin.Store(nil)
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, c := range r.clients {
			c.Close()
		}
	}()
	backoff := 100 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
		}
		if r.lookup(ctx) {
			backoff = 100 * time.Millisecond
			continue
		}
		// No member says it leads (an election, or none answers): every
		// answer asks again, so look at most every backoff.
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// lookup asks every member for its status and pins the one that leads by
// its own account; it reports whether one did.
func (r *leaderRoute) lookup(ctx context.Context) bool {
	type status struct {
		c    *clientv3.Client
		resp *pb.StatusResponse
	}
	got := make(chan status, len(r.eps))
	for _, ep := range r.eps {
		c := r.client(ep)
		go func() {
			if c == nil {
				got <- status{}
				return
			}
			sctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			resp, err := pb.NewMaintenanceClient(c.ActiveConnection()).Status(sctx, &pb.StatusRequest{})
			if err != nil {
				resp = nil
			}
			got <- status{c, resp}
		}()
	}
	var leader *clientv3.Client
	var term uint64
	for range r.eps {
		st := <-got
		if st.resp == nil || st.resp.Header == nil {
			continue
		}
		if st.resp.Leader != 0 && st.resp.Leader == st.resp.Header.MemberId && st.resp.RaftTerm >= term {
			leader, term = st.c, st.resp.RaftTerm
		}
	}
	if leader == nil {
		r.pin.Store(nil)
		r.term.Store(0)
		r.lookups.WithLabelValues("none").Inc()
		return false
	}
	r.term.Store(term)
	r.pin.Store(leader)
	r.lookups.WithLabelValues("found").Inc()
	return true
}

// client is ep's own client, made on first use (nil if it cannot be).
func (r *leaderRoute) client(ep string) *clientv3.Client {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.clients[ep]; c != nil {
		return c
	}
	cfg := r.template
	cfg.Endpoints = []string{ep}
	c, err := clientv3.New(cfg)
	if err != nil {
		return nil
	}
	r.clients[ep] = c
	return c
}
