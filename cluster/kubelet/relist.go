package kubelet

import (
	"context"
	"hash/fnv"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// runRelist is kstep's PLEG: every RelistPeriod it lists this node's
// sandboxes and containers (two CRI calls), folds each pod's into a
// fingerprint of ids and states, and wakes the worker of every pod whose
// fingerprint changed: a container that exited, a sandbox that died. The
// first relist wakes every pod the runtime has, which is how a restarted
// kubelet adopts what it already runs and finds orphans (pods the apiserver
// no longer has), whose workers then remove them. It starts only after the
// pod informer synced, so "not in the informer" means gone.
func (k *Kubelet) runRelist(ctx context.Context) {
	var prev map[types.UID]uint64
	once := func() {
		if next, err := k.relist(ctx, prev); err == nil {
			prev = next
		} else if ctx.Err() == nil {
			k.log.Warn("relist", "err", err)
		}
	}
	once()
	if !k.waitPhase(ctx, k.cfg.RelistPeriod) {
		return
	}
	t := k.clock.NewTicker(k.cfg.RelistPeriod)
	defer t.Stop()
	for {
		once()
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// phase is this kubelet's offset into a period of its periodic work (Lease
// renewal, relist, node status): the node name's hash spread over the
// period. Real kubelets start when their machines do; a hollow-nodes
// process starts hundreds at once, and without a phase of their own their
// renewals would reach the apiserver and etcd together, a burst every
// period that the pods written during it wait behind.
func (k *Kubelet) phase(period time.Duration) time.Duration {
	return phaseOf(k.cfg.NodeName, period)
}

func phaseOf(node string, period time.Duration) time.Duration {
	if period <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(node))
	return time.Duration(h.Sum64() % uint64(period))
}

// waitPhase waits out phase(period); false when ctx ended first.
func (k *Kubelet) waitPhase(ctx context.Context, period time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-k.clock.After(k.phase(period)):
		return true
	}
}

type relistEntry struct {
	key   string // namespace/name from the labels
	items []string
}

// relist runs once; prev nil wakes every pod found.
func (k *Kubelet) relist(ctx context.Context, prev map[types.UID]uint64) (map[types.UID]uint64, error) {
	start := time.Now()
	defer func() { relistDuration.Observe(time.Since(start).Seconds()) }()
	sel := map[string]string{labelNode: k.cfg.NodeName}
	sbs, err := k.runtime.ListPodSandbox(ctx, sel)
	if err != nil {
		return nil, err
	}
	cs, err := k.runtime.ListContainers(ctx, sel)
	if err != nil {
		return nil, err
	}
	pods := make(map[types.UID]*relistEntry, len(sbs))
	entry := func(l map[string]string) *relistEntry {
		uid := types.UID(l[labelPodUID])
		e := pods[uid]
		if e == nil {
			e = &relistEntry{key: l[labelPodNamespace] + "/" + l[labelPodName]}
			pods[uid] = e
		}
		return e
	}
	for _, s := range sbs {
		e := entry(s.Labels)
		e.items = append(e.items, "s"+s.Id+s.State.String())
	}
	for _, c := range cs {
		e := entry(c.Labels)
		e.items = append(e.items, "c"+c.Id+c.State.String())
	}
	next := make(map[types.UID]uint64, len(pods))
	for uid, e := range pods {
		slices.Sort(e.items)
		h := fnv.New64a()
		for _, it := range e.items {
			_, _ = h.Write([]byte(it))
		}
		next[uid] = h.Sum64()
		if old, ok := prev[uid]; prev == nil || !ok || old != next[uid] {
			k.dispatch(uid, e.key)
		}
	}
	for uid := range prev {
		if _, ok := next[uid]; !ok {
			k.podChanged(uid) // everything of it vanished from the runtime
		}
	}
	return next, nil
}
