package chaos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/metadata"

	"github.com/kstep-dev/kstep/cluster/etcdadmin"
	"github.com/kstep-dev/kstep/cluster/provider"
)

// etcdClient is the engine's one way to etcd: every request the engine
// sends to the members' client URLs goes through its methods (the
// leader's poll and the targets' resolution, the members' hashes, the
// history the checks replay, a fill's recovery). Nothing else in the
// package holds an etcd client. A nil *etcdClient is a cluster whose etcd
// is not reachable (external): its callers check for it.
type etcdClient struct {
	cli *clientv3.Client
}

// dialEtcd is a client of p's etcd members, nil when p has none (an
// external cluster). A secure cluster's etcd takes kstep-etcd-admin's
// certificate, on its client URLs and its link control alike.
func dialEtcd(p provider.Provider) (*etcdClient, error) {
	var endpoints []string
	for _, a := range p.Actors() {
		if a.Role == provider.RoleEtcd {
			endpoints = append(endpoints, strings.TrimPrefix(a.Endpoint, "http://"))
		}
	}
	tls, err := provider.EtcdAdminTLS(p.StateDir(), p.Actors())
	if err != nil {
		return nil, err
	}
	if len(endpoints) == 0 {
		return nil, nil
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, TLS: tls, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("etcd client: %w", err)
	}
	return &etcdClient{cli: cli}, nil
}

// Close closes the connections.
func (e *etcdClient) Close() error { return e.cli.Close() }

// leader asks every running member for its status and returns the name
// of the member the others call leader.
func (e *etcdClient) leader(ctx context.Context, members []provider.Actor) (string, error) {
	byID := map[uint64]string{}
	var leader uint64
	var errs []error
	for _, m := range members {
		ep := strings.TrimPrefix(strings.TrimPrefix(m.Endpoint, "http://"), "https://")
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		st, err := e.cli.Status(sctx, ep)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m.Name, err))
			continue
		}
		byID[st.Header.MemberId] = m.Name
		if st.Leader != 0 {
			leader = st.Leader
		}
	}
	if name, ok := byID[leader]; ok && leader != 0 {
		return name, nil
	}
	return "", fmt.Errorf("etcd leader: %w: no member reports a leader it knows (%v)", ErrNoTarget, errors.Join(errs...))
}

// hashes asks every running member for its HashKV at one revision (the
// current one of the first member), waiting for laggards.
func (e *etcdClient) hashes(ctx context.Context, p provider.Provider) []MemberHash {
	var members []provider.Actor
	for _, a := range p.Actors() {
		if a.Role == provider.RoleEtcd && a.Running() {
			members = append(members, a)
		}
	}
	if len(members) == 0 {
		return nil
	}
	ep := func(a provider.Actor) string { return strings.TrimPrefix(a.Endpoint, "http://") }
	var rev int64
	for try := 0; try < 20 && rev == 0; try++ {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		st, err := e.cli.Status(sctx, ep(members[0]))
		cancel()
		if err == nil {
			rev = st.Header.Revision
		} else {
			sleep(ctx, 250*time.Millisecond)
		}
	}
	var out []MemberHash
	for _, m := range members {
		h := MemberHash{Member: m.Name, Rev: rev}
		var err error
		for try := 0; try < 20; try++ {
			sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			var resp *clientv3.HashKVResponse
			resp, err = e.cli.HashKV(sctx, ep(m), rev)
			cancel()
			if err == nil {
				h.Hash = resp.Hash
				break
			}
			sleep(ctx, 250*time.Millisecond) // the member has not applied rev yet
		}
		if err != nil {
			h.Err = err.Error()
		}
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Member < out[j].Member })
	return out
}

// revision is etcd's current revision.
func (e *etcdClient) revision(ctx context.Context) (int64, error) {
	resp, err := e.cli.Get(ctx, podsPrefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("etcd revision: %w", err)
	}
	return resp.Header.Revision, nil
}

// replayStreams numbers the replays' watch streams.
var replayStreams atomic.Int64

// replay replays etcd's events under prefix from revision from up to
// revision to. The prefix need not change at to: once the watch has
// delivered every event up to to, etcd's progress notification says so.
//
// The watch has a gRPC stream of its own. etcd answers a progress request
// once for all the watchers of a stream, and the client hands the answer to
// every watcher of the stream it has then, also one whose creation was
// answered after etcd made the progress answer and before it sent it: that
// watcher would take it as caught up before etcd had sent it any of its
// history, and a replay sharing its stream with Keep's others ended with no
// revisions at all. The client shares a stream among the watches whose
// contexts carry the same metadata: a key of the replay's own makes one.
func (e *etcdClient) replay(ctx context.Context, prefix string, from, to int64) ([]int64, error) {
	revs := []int64{}
	own := metadata.AppendToOutgoingContext(clientv3.WithRequireLeader(ctx),
		"kstep-history-replay", strconv.FormatInt(replayStreams.Add(1), 10))
	wctx, cancel := context.WithTimeout(own, time.Minute)
	defer cancel()
	wch := e.cli.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(from))
	// etcd answers a progress request only once the stream's watchers have
	// caught up: ask until it does.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case resp, ok := <-wch:
			if !ok {
				return nil, fmt.Errorf("etcd history of %s: revision %d not reached: %w", prefix, to, wctx.Err())
			}
			if err := resp.Err(); err != nil {
				return nil, fmt.Errorf("etcd history of %s from %d: %w", prefix, from, err)
			}
			last := int64(0)
			for _, e := range resp.Events {
				if e.Kv.ModRevision > to {
					return revs, nil
				}
				revs = append(revs, e.Kv.ModRevision)
				last = e.Kv.ModRevision
			}
			if last == to || (resp.IsProgressNotify() && resp.Header.Revision >= to) {
				return revs, nil
			}
		case <-tick.C:
			_ = e.cli.RequestProgress(wctx)
		}
	}
}

// recover is etcd's NOSPACE recovery (etcdadmin.Recover: what kstep etcd
// recover runs), compacting to rev, the revision the history was kept up
// to.
func (e *etcdClient) recover(ctx context.Context, rev int64, log *slog.Logger) (etcdadmin.Recovery, error) {
	return etcdadmin.Recover(ctx, e.cli, rev, log)
}
