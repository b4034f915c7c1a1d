package storage_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kstep-dev/kstep/cluster/etcd"
	"github.com/kstep-dev/kstep/cluster/netfault"
	"github.com/kstep-dev/kstep/cluster/storage"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// leaderAttempt bounds one attempt in these tests: a write sent to a member
// that answers nothing is sent again after it, so a write that took this
// long went to a silent member first.
const leaderAttempt = time.Second

type routedCluster struct {
	members []*etcd.Member
	direct  []*clientv3.Client    // one per member, no proxy
	doors   []*netfault.Proxy     // the store's way to each member
	store   *storage.Store        // over every door
	reg     *prometheus.Registry  // the store's metrics
	eps     []string              // the doors' URLs
	plain   func() *storage.Store // another store over the doors, writes not routed
	ctx     context.Context       // the test's
	killed  map[int]bool
}

// routedStore is a three-member etcd cluster and a Store over link proxies
// in front of each member's client URL, its writes routed to the leader.
func routedStore(t *testing.T) *routedCluster {
	t.Helper()
	members, urls := testenv.EtcdCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	rc := &routedCluster{members: members, ctx: ctx, killed: map[int]bool{}}
	for _, u := range urls {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		p, err := netfault.Listen("etcd-client", "127.0.0.1:0", pu.Host, netfault.Senders{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		rc.doors = append(rc.doors, p)
		rc.eps = append(rc.eps, "http://"+p.Addr().String())
		d, err := clientv3.New(clientv3.Config{Endpoints: []string{u}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		rc.direct = append(rc.direct, d)
	}
	newStore := func(reg prometheus.Registerer) *storage.Store {
		cli, err := clientv3.New(clientv3.Config{Endpoints: rc.eps, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cli.Close() })
		s := storage.NewStore(cli, reg)
		s.SetRetry(storage.Retry{Attempt: leaderAttempt, Budget: 15 * time.Second})
		return s
	}
	rc.reg = prometheus.NewRegistry()
	rc.store = newStore(rc.reg)
	rc.store.RouteWritesToLeader(ctx, clientv3.Config{Logger: zap.NewNop()})
	rc.plain = func() *storage.Store { return newStore(nil) }
	rc.waitFound(t, 1)
	return rc
}

// leader is the index of the member that leads, by its own account.
func (rc *routedCluster) leader(t *testing.T) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for i, d := range rc.direct {
			if rc.closed(i) {
				continue
			}
			sctx, cancel := context.WithTimeout(rc.ctx, time.Second)
			st, err := d.Status(sctx, d.Endpoints()[0])
			cancel()
			if err == nil && st.Leader != 0 && st.Leader == st.Header.MemberId {
				return i
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no member leads")
	return -1
}

func (rc *routedCluster) closed(i int) bool { return rc.killed[i] }

// kill stops member i.
func (rc *routedCluster) kill(i int) {
	rc.killed[i] = true
	rc.members[i].Close()
}

// waitFound waits until the store has found a leader n times.
func (rc *routedCluster) waitFound(t *testing.T, n float64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for lookups(rc.reg, "found") < n {
		if time.Now().After(deadline) {
			t.Fatalf("the store found the leader %v times, want %v", lookups(rc.reg, "found"), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func lookups(reg *prometheus.Registry, result string) float64 {
	return counter(reg, "kstep_etcd_leader_lookups_total", map[string]string{"result": result})
}

// silenceAllBut makes every door but keep's answer nothing for a minute.
func (rc *routedCluster) silenceAllBut(t *testing.T, keep int) {
	t.Helper()
	for i, p := range rc.doors {
		if i == keep {
			continue
		}
		if err := p.Set([]netfault.Rule{{Name: "silent", Up: netfault.Fault{Blackhole: true}, Down: netfault.Fault{Blackhole: true}, For: netfault.Duration{Duration: time.Minute}}}); err != nil {
			t.Fatal(err)
		}
	}
}

// writes creates and updates n keys through s and returns how many took
// an attempt bound or longer (went to a silent member first); every write
// must succeed and be stored.
func (rc *routedCluster) writes(t *testing.T, s *storage.Store, prefix string, n int) int {
	// Read back from a live member directly, not through the doors.
	var reader *clientv3.Client
	for i, d := range rc.direct {
		if !rc.closed(i) {
			reader = d
			break
		}
	}
	t.Helper()
	slow := 0
	check := func(what string, start time.Time) {
		if took := time.Since(start); took >= leaderAttempt {
			slow++
			t.Logf("%s answered after %v", what, took)
		}
	}
	for i := range n {
		key := fmt.Sprintf("/registry/things/ns/%s-%d", prefix, i)
		start := time.Now()
		rev, err := s.Create(rc.ctx, key, []byte("a"))
		if err != nil {
			t.Fatalf("create %s: %v", key, err)
		}
		check("create "+key, start)
		start = time.Now()
		rev2, _, err := s.Update(rc.ctx, key, []byte("b"), rev)
		if err != nil {
			t.Fatalf("update %s: %v", key, err)
		}
		check("update "+key, start)
		got, err := reader.Get(rc.ctx, key)
		if err != nil || len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "b" || got.Kvs[0].ModRevision != rev2 {
			t.Fatalf("%s holds %v (err %v), the update answered %d", key, got.Kvs, err, rev2)
		}
	}
	return slow
}

// Writes go to the leader: with every other member's door silent, none
// waits out an attempt, where a store that balances over the members
// sends some of them to a silent door first.
func TestWritesGoToTheLeader(t *testing.T) {
	rc := routedStore(t)
	l := rc.leader(t)
	plain := rc.plain()
	rc.writes(t, rc.store, "warm", 2)
	rc.writes(t, plain, "warm-plain", 3) // its connections to every member up
	rc.silenceAllBut(t, l)
	if slow := rc.writes(t, rc.store, "routed", 6); slow > 0 {
		t.Fatalf("%d of 12 writes went to a silent follower first", slow)
	}
	// The control: the same writes balanced over the members.
	if slow := rc.writes(t, plain, "balanced", 2); slow == 0 {
		t.Fatal("no write of a balancing store went to a silent follower: the doors are not silent, the test proves nothing")
	}
}

// When the leader hands over, the first write answered in the new term has
// the store look again, and later writes go to the new leader.
func TestWritesFollowANewLeader(t *testing.T) {
	rc := routedStore(t)
	old := rc.leader(t)
	next := (old + 1) % len(rc.members)
	st, err := rc.direct[next].Status(rc.ctx, rc.direct[next].Endpoints()[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rc.direct[old].MoveLeader(rc.ctx, st.Header.MemberId); err != nil {
		t.Fatalf("move leader: %v", err)
	}
	if got := rc.leader(t); got != next {
		t.Fatalf("member %d leads after the move to %d", got, next)
	}
	// One write in the new term tells the store.
	rc.writes(t, rc.store, "after-move", 1)
	rc.waitFound(t, 2)
	rc.silenceAllBut(t, next)
	if slow := rc.writes(t, rc.store, "routed", 6); slow > 0 {
		t.Fatalf("%d of 12 writes went to a member that no longer leads", slow)
	}
}

// A killed leader costs its writes no more than the resend it already
// costs a balancing store: every write succeeds, and once a new leader is
// elected writes go to it.
func TestWritesSurviveTheLeaderKilled(t *testing.T) {
	rc := routedStore(t)
	old := rc.leader(t)
	rc.writes(t, rc.store, "before", 2)
	rc.kill(old)
	start := time.Now()
	rc.writes(t, rc.store, "during", 3)
	t.Logf("three creates and updates after the kill took %v", time.Since(start))
	next := rc.leader(t)
	if next == old {
		t.Fatalf("the killed member %d still leads", old)
	}
	rc.waitFound(t, 2)
	rc.silenceAllBut(t, next)
	if slow := rc.writes(t, rc.store, "routed", 6); slow > 0 {
		t.Fatalf("%d of 12 writes went to a member other than the new leader", slow)
	}
}
