package storage_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/etcdadmin"
	"github.com/kstep-dev/kstep/cluster/storage"
	"github.com/kstep-dev/kstep/internal/testenv"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Two apiservers' compactors on one etcd: history older than an interval
// goes, the last interval stays, and each interval is compacted once, not
// once per apiserver.
func TestCompactorsShareTheWork(t *testing.T) {
	_, cli := testenv.Etcd(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Writes go on all along.
	go func() {
		for i := 0; ctx.Err() == nil; i++ {
			_, _ = cli.Put(ctx, fmt.Sprintf("/registry/configmaps/default/c%d", i%50), "v")
			time.Sleep(2 * time.Millisecond)
		}
	}()
	first, err := cli.Put(ctx, "/registry/first", "v")
	if err != nil {
		t.Fatal(err)
	}
	const interval = 300 * time.Millisecond
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var wg sync.WaitGroup
	counts := make([]int, 2)
	start := time.Now()
	for i := range counts {
		s := storage.NewStore(cli, nil)
		wg.Go(func() { counts[i] = s.Compact(ctx, storage.Compaction{Interval: interval}, log) })
	}
	time.Sleep(10*interval + interval/2)
	cancel()
	wg.Wait()
	ticks := int(time.Since(start) / interval)
	total := counts[0] + counts[1]
	// The first interval of each compactor only records a revision; one
	// compaction per interval after that at most.
	if total < ticks/2 || total > ticks {
		t.Fatalf("%v compactions (%v per compactor) in %d intervals: want one per interval, not one per compactor", total, counts, ticks)
	}
	bg := context.Background()
	_, err = cli.Get(bg, "/registry/first", clientv3.WithRev(first.Header.Revision))
	if !errors.Is(err, rpctypes.ErrCompacted) {
		t.Fatalf("reading the first revision after %d compactions: %v, want compacted", total, err)
	}
	// The last interval is still there.
	resp, err := cli.Get(bg, storage.CompactRevKey)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("compact key: %v %v", resp, err)
	}
	head, err := cli.Get(bg, "/registry/first")
	if err != nil {
		t.Fatal(err)
	}
	if head.Header.Revision-1 > 0 {
		if _, err := cli.Get(bg, "/registry/first", clientv3.WithRev(head.Header.Revision-1)); err != nil {
			t.Fatalf("the last interval's history is gone: %v", err)
		}
	}
	t.Logf("%d compactions by two compactors in %d intervals of %v (%v each); compacted to %s", total, ticks, interval, counts, resp.Kvs[0].Value)
}

// After a compaction it did, the compactor defragments a member whose file
// is mostly unused: the file shrinks to about what is in use. Below the
// size floor it leaves the member alone.
func TestCompactorDefragments(t *testing.T) {
	_, cli := testenv.Etcd(t)
	bg := context.Background()
	value := string(make([]byte, 64<<10))
	for i := range 160 { // 10 MiB of history over 4 keys
		if _, err := cli.Put(bg, fmt.Sprintf("/registry/big/%d", i%4), value); err != nil {
			t.Fatal(err)
		}
	}
	s := storage.NewStore(cli, nil)
	space := func() etcdadmin.MemberSpace {
		ms, err := s.Space(bg)
		if err != nil || len(ms) != 1 {
			t.Fatalf("space: %v %v", ms, err)
		}
		return ms[0]
	}
	before := space()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	run := func(c storage.Compaction) {
		ctx, cancel := context.WithTimeout(bg, 2*time.Second)
		defer cancel()
		// The first interval records a revision, the second compacts
		// to it (and defragments); keep writing so there is a next one.
		go func() {
			for ctx.Err() == nil {
				_, _ = cli.Put(ctx, "/registry/tick", "v")
				time.Sleep(20 * time.Millisecond)
			}
		}()
		s.Compact(ctx, c, log)
	}
	run(storage.Compaction{Interval: 300 * time.Millisecond, DefragThreshold: 0.5, DefragMinBytes: 1 << 30})
	floor := space()
	if floor.DBSize < before.DBSize {
		t.Fatalf("defragmented below the size floor: %d → %d bytes", before.DBSize, floor.DBSize)
	}
	if floor.Fragmentation() < 0.5 {
		t.Fatalf("after compaction only %.0f%% of the file is unused; the test wants a fragmented file", 100*floor.Fragmentation())
	}
	run(storage.Compaction{Interval: 300 * time.Millisecond, DefragThreshold: 0.5, DefragMinBytes: 1 << 20})
	after := space()
	t.Logf("db %d bytes (%d in use) → compacted %d (%.0f%% unused) → defragmented %d (%d in use)", before.DBSize, before.DBSizeInUse,
		floor.DBSize, 100*floor.Fragmentation(), after.DBSize, after.DBSizeInUse)
	if after.DBSize > floor.DBSize/2 {
		t.Fatalf("not defragmented: %d → %d bytes", floor.DBSize, after.DBSize)
	}
}
