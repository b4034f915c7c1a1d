package chaos

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kstep-dev/kstep/internal/testenv"
)

// The history the checks replay survives the engine's own compaction when
// Keep read it first; without Keep the replay fails (it does not pass
// silently with less history). A prefix that did not change at the last
// revision is replayed to it all the same (etcd's progress notification).
func TestEtcdHistoryKeptAcrossCompaction(t *testing.T) {
	_, cli := testenv.Etcd(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	put := func(key string) int64 {
		t.Helper()
		resp, err := cli.Put(ctx, key, "v")
		if err != nil {
			t.Fatal(err)
		}
		return resp.Header.Revision
	}
	var want []int64
	for i := range 5 {
		want = append(want, put(podsPrefix+"ns/p"+string(rune('a'+i))))
		put("/registry/leases/other") // another prefix between them
	}
	cmRev := put(etcdPrefix("ConfigMap") + "probe-0")
	filler := put("/registry/configmaps/" + fillNamespace + "/fill-0") // not a checked key
	if _, err := cli.Delete(ctx, "/registry/configmaps/"+fillNamespace+"/fill-0"); err != nil {
		t.Fatal(err)
	}

	h := &etcdHistory{etcd: &etcdClient{cli: cli}}
	rev, err := h.Keep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rev <= filler {
		t.Fatalf("kept up to %d, before the last write %d", rev, filler+1)
	}
	if _, err := cli.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	want = append(want, put(podsPrefix+"ns/later"))

	got, err := h.revisions(ctx, podsPrefix, 1, want[len(want)-1])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("pods' revisions %v, want %v (kept before the compaction, replayed after it)", got, want)
	}
	if got, err := h.revisions(ctx, etcdPrefix("ConfigMap"), 1, cmRev); err != nil || !slices.Equal(got, []int64{cmRev}) {
		t.Errorf("probe ConfigMaps' revisions %v (%v), want [%d] and not the filler's", got, err, cmRev)
	}
	if got, err := h.revisions(ctx, etcdPrefix("Deployment"), 1, want[len(want)-1]); err != nil || len(got) != 0 {
		t.Errorf("Deployments (none): %v, %v", got, err)
	}

	fresh := &etcdHistory{etcd: &etcdClient{cli: cli}}
	if got, err := fresh.revisions(ctx, podsPrefix, 1, want[len(want)-1]); err == nil {
		t.Errorf("replayed %v across a compaction with nothing kept: want an error", got)
	}
}

// A replay shares its client with other watches that ask etcd for progress
// (Keep's other replays, six side by side): etcd's answer to them must not
// end the replay before it has its own history. With one stream for all,
// an answer made before the replay's watch was created and sent after its
// creation (the stream busy with big values) ended it with no revisions,
// as a chaos run's lost-write check found its ReplicaSets' creations
// missing from the kept history.
func TestEtcdHistoryReplayIgnoresOthersProgress(t *testing.T) {
	_, cli := testenv.Etcd(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	val := strings.Repeat("v", 1<<10)
	var want []int64
	for i := range 300 {
		resp, err := cli.Put(ctx, podsPrefix+"ns/p"+strconv.Itoa(i%20), val)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, resp.Header.Revision)
	}
	to := want[len(want)-1]
	// The neighbour: a watch of another prefix on the same client and
	// context, its stream kept busy with big values, asking progress.
	nctx, stop := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer stop()
	nch := cli.Watch(nctx, "/registry/leases/", clientv3.WithPrefix())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	wg.Go(func() {
		for range nch {
		}
	})
	wg.Go(func() {
		big := strings.Repeat("b", 256<<10)
		for nctx.Err() == nil {
			_, _ = cli.Put(nctx, "/registry/leases/big", big)
		}
	})
	wg.Go(func() {
		for nctx.Err() == nil {
			_ = cli.RequestProgress(nctx)
			time.Sleep(time.Millisecond)
		}
	})
	for round := range 10 {
		got, err := (&etcdClient{cli: cli}).replay(ctx, podsPrefix, 1, to)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("replay %d: %d revisions, want %d", round, len(got), len(want))
		}
	}
}
