package storage_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kstep-dev/kstep/cluster/etcd"
	"github.com/kstep-dev/kstep/cluster/storage"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// Until its alarm is raised, etcd applies writes over the quota and answers
// them NOSPACE: the store reads back and reports such a write as the
// success it was, so what is stored is always the last write acknowledged,
// and a NOSPACE answer always means "not applied". Creates and updates.
func TestNoSpaceAnswersWhatApplied(t *testing.T) {
	for run := range 3 {
		_, cli := testenv.EtcdWith(t, func(c *etcd.Config) { c.QuotaBackendBytes = 2 << 20 })
		s := storage.NewStore(cli, nil)
		ctx := context.Background()
		value := strings.Repeat("x", 100<<10)
		acked := map[string]string{}
		revs := map[string]int64{}
		var failed error
		for i := 0; i < 400 && failed == nil; i++ {
			key := fmt.Sprintf("/registry/k%d", i%6)
			v := fmt.Sprint(i) + value
			if rev, ok := revs[key]; ok {
				nrev, _, err := s.Update(ctx, key, []byte(v), rev)
				if failed = err; err == nil {
					revs[key], acked[key] = nrev, v
				}
			} else {
				rev, err := s.Create(ctx, key, []byte(v))
				if failed = err; err == nil {
					revs[key], acked[key] = rev, v
				}
			}
		}
		if !errors.Is(failed, storage.ErrNoSpace) {
			t.Fatalf("run %d: the quota never filled, or another error: %v", run, failed)
		}
		for k := range 6 {
			key := fmt.Sprintf("/registry/k%d", k)
			if _, ok := acked[key]; !ok {
				if kv, err := s.Get(ctx, key); !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("run %d: %s was never acknowledged, holds %.6q: %v", run, key, kv.Value, err)
				}
			}
		}
		for key, v := range acked {
			kv, err := s.Get(ctx, key)
			if err != nil || string(kv.Value) != v || kv.ModRev != revs[key] {
				t.Errorf("run %d: %s holds %.6q (rev %d), want the last acknowledged %.6q (rev %d): %v", run, key, kv.Value, kv.ModRev, v, revs[key], err)
			}
		}
	}
}
