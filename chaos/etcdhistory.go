package chaos

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/metadata"

	"github.com/kstep-dev/kstep/loadgen"
)

// etcdHistory replays etcd's history of the keys the lost-write and
// watch-gap checks read. A chaos run holds the apiservers' compaction, so
// the whole history is there at the end of the run; the one compaction the
// engine does itself (a fill fault's recovery) is preceded by Keep, which
// reads the history up to the compaction revision and keeps it.
type etcdHistory struct {
	cli *clientv3.Client
	// kept holds, for each checked prefix, the revisions at which it
	// changed from revision 1 up to upTo (0: nothing kept).
	kept map[string][]int64
	upTo int64
	// took is how long the last Keep read.
	took time.Duration
}

// podsPrefix is where the apiserver keeps pods.
const podsPrefix = "/registry/pods/"

// etcdPrefix is where the apiserver keeps the objects of a kind the checks
// follow: the probe's ConfigMaps (only its namespace's), the load's
// ReplicaSets and Deployments.
func etcdPrefix(kind string) string {
	switch kind {
	case "ConfigMap":
		return "/registry/configmaps/" + probeNamespace + "/"
	case loadgen.KindDeployment:
		return "/registry/deployments/"
	}
	return "/registry/replicasets/"
}

var checkedPrefixes = []string{podsPrefix, setPrefix(WatchBeat), setPrefix(WatchQuiet), etcdPrefix("ConfigMap"), etcdPrefix(loadgen.KindReplicaSet), etcdPrefix(loadgen.KindDeployment)}

// Keep reads the checked prefixes' history up to etcd's current revision
// and keeps it; it returns that revision, the one to compact to.
func (h *etcdHistory) Keep(ctx context.Context) (int64, error) {
	start := time.Now()
	resp, err := h.cli.Get(ctx, podsPrefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("etcd revision: %w", err)
	}
	rev := resp.Header.Revision
	// The prefixes in parallel: each replay waits for etcd to say it has
	// caught up.
	got := make([][]int64, len(checkedPrefixes))
	errs := make([]error, len(checkedPrefixes))
	var wg sync.WaitGroup
	for i, p := range checkedPrefixes {
		wg.Go(func() { got[i], errs[i] = h.revisions(ctx, p, 1, rev) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	kept := map[string][]int64{}
	for i, p := range checkedPrefixes {
		kept[p] = got[i]
	}
	h.kept, h.upTo, h.took = kept, rev, time.Since(start)
	return rev, nil
}

// KeptIn is how long the last Keep took.
func (h *etcdHistory) KeptIn() time.Duration { return h.took }

// revisions returns the revisions in [from, to] at which a key under
// prefix changed: from what was kept, then from etcd.
func (h *etcdHistory) revisions(ctx context.Context, prefix string, from, to int64) ([]int64, error) {
	revs := []int64{}
	if to < from {
		return revs, nil
	}
	if kept, ok := h.kept[prefix]; ok && from <= h.upTo {
		for _, v := range kept {
			if v >= from && v <= to {
				revs = append(revs, v)
			}
		}
		from = h.upTo + 1
	}
	if to < from {
		return revs, nil
	}
	more, err := replay(ctx, h.cli, prefix, from, to)
	return append(revs, more...), err
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
func replay(ctx context.Context, cli *clientv3.Client, prefix string, from, to int64) ([]int64, error) {
	revs := []int64{}
	own := metadata.AppendToOutgoingContext(clientv3.WithRequireLeader(ctx),
		"kstep-history-replay", strconv.FormatInt(replayStreams.Add(1), 10))
	wctx, cancel := context.WithTimeout(own, time.Minute)
	defer cancel()
	wch := cli.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(from))
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
			_ = cli.RequestProgress(wctx)
		}
	}
}

// revisionsOf is etcd's history of the prefixes the writes touched, from
// the oldest write's revision to the newest: the revisions at which each
// prefix changed.
func (h *etcdHistory) revisionsOf(ctx context.Context, writes []AckedWrite) (map[int64]bool, error) {
	ranges := map[string][2]int64{}
	for _, w := range writes {
		if w.RV == 0 {
			continue
		}
		p := etcdPrefix(w.Kind)
		r, ok := ranges[p]
		if !ok {
			r = [2]int64{w.RV, w.RV}
		}
		r[0], r[1] = min(r[0], w.RV), max(r[1], w.RV)
		ranges[p] = r
	}
	out := map[int64]bool{}
	for p, r := range ranges {
		revs, err := h.revisions(ctx, p, r[0], r[1])
		if err != nil {
			return nil, err
		}
		for _, v := range revs {
			out[v] = true
		}
	}
	return out, nil
}

// setPrefix is where etcd keeps a watched set: every pod, or the beat's
// or the quiet set's one ConfigMap (its key is a prefix of itself alone).
func setPrefix(set string) string {
	switch set {
	case WatchBeat:
		return etcdPrefix("ConfigMap") + beatName
	case WatchQuiet:
		return etcdPrefix("ConfigMap") + quietName
	}
	return podsPrefix
}

// setHistory is etcd's history of a watched set over the span its
// watchers cover.
func (h *etcdHistory) setHistory(ctx context.Context, set string, ws []WatcherLog) ([]int64, error) {
	from, to, any := int64(0), int64(0), false
	for _, w := range ws {
		if w.Set != set {
			continue
		}
		if !any {
			from, any = w.From, true
		}
		from = min(from, w.From)
		to = max(to, w.last())
	}
	if !any {
		return []int64{}, nil
	}
	return h.revisions(ctx, setPrefix(set), from+1, to)
}
