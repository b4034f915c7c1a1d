package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kstep-dev/kstep/results"
)

// leaderLeases are the Leases the control plane's leaders hold in
// kube-system: kstep's (cmd/kstep/controllermanager.go,
// cluster/scheduler.LeaseName) and, on an external cluster, upstream's
// kube-controller-manager and kube-scheduler (their --leader-elect default).
var leaderLeases = map[string]bool{
	"kstep-controller-manager": true, "kstep-scheduler": true,
	"kube-controller-manager": true, "kube-scheduler": true,
}

// disruptions records, during the load, what a healthy run never shows: a
// leader Lease changing hands and a node leaving Ready. A run past what the
// machine sustains shows both (renewals and heartbeats queue behind the
// load), and the report must say so beside the latencies they distort.
type disruptions struct {
	start time.Time
	now   func() time.Time

	mu      sync.Mutex
	synced  bool
	holders map[string]string
	ready   map[string]bool
	out     []results.Disruption
}

// watchDisruptions starts the watches; stop ends them and returns what they
// saw, in order; seen is what they saw so far (the watches go on).
func watchDisruptions(ctx context.Context, cs kubernetes.Interface, start time.Time) (stop, seen func() []results.Disruption, err error) {
	d := &disruptions{start: start, now: time.Now, holders: map[string]string{}, ready: map[string]bool{}}
	wctx, cancel := context.WithCancel(ctx)
	leases := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("kube-system"))
	nodes := informers.NewSharedInformerFactory(cs, 0)
	if _, err := leases.Coordination().V1().Leases().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { d.lease(obj) },
		UpdateFunc: func(_, obj any) { d.lease(obj) },
	}); err != nil {
		cancel()
		return nil, nil, err
	}
	if _, err := nodes.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { d.node(obj) },
		UpdateFunc: func(_, obj any) { d.node(obj) },
	}); err != nil {
		cancel()
		return nil, nil, err
	}
	leases.Start(wctx.Done())
	nodes.Start(wctx.Done())
	leases.WaitForCacheSync(wctx.Done())
	nodes.WaitForCacheSync(wctx.Done())
	d.mu.Lock()
	d.synced = true // what the caches held at start is the baseline
	d.mu.Unlock()
	seen = func() []results.Disruption {
		d.mu.Lock()
		defer d.mu.Unlock()
		return slices.Clone(d.out)
	}
	return func() []results.Disruption {
		cancel()
		leases.Shutdown()
		nodes.Shutdown()
		return seen()
	}, seen, nil
}

func (d *disruptions) add(kind, detail string) {
	d.out = append(d.out, results.Disruption{AtS: d.now().Sub(d.start).Seconds(), Kind: kind, Detail: detail})
}

func (d *disruptions) lease(obj any) {
	l, ok := obj.(*coordinationv1.Lease)
	if !ok || !leaderLeases[l.Name] {
		return
	}
	holder := ""
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	prev, seen := d.holders[l.Name]
	d.holders[l.Name] = holder
	if d.synced && seen && prev != holder {
		d.add("leader", fmt.Sprintf("%s/%s: %s → %s", l.Namespace, l.Name, orNone(prev), orNone(holder)))
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func (d *disruptions) node(obj any) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return
	}
	ready, why := false, "no Ready condition"
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready, why = c.Status == corev1.ConditionTrue, fmt.Sprintf("Ready=%s %s", c.Status, c.Reason)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	prev, seen := d.ready[n.Name]
	d.ready[n.Name] = ready
	switch {
	case !d.synced || !seen || prev == ready:
	case !ready:
		d.add("node", fmt.Sprintf("%s left Ready (%s)", n.Name, why))
	default:
		d.add("node", n.Name+" Ready again")
	}
}
