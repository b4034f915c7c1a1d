package chaos

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// recorder is the History under construction: observers append to it
// under its lock.
type recorder struct {
	mu sync.Mutex
	h  History
	// now is the clock every sample is stamped with.
	now func() time.Time
}

func (r *recorder) etcdLeader(holder string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.h.EtcdLeader); n > 0 && r.h.EtcdLeader[n-1].Holder == holder {
		return
	}
	r.h.EtcdLeader = append(r.h.EtcdLeader, LeaderSample{At: r.now(), Holder: holder})
}

func (r *recorder) lease(name, holder string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.h.Leases[name]
	if n := len(s); n > 0 && s[n-1].Holder == holder {
		return
	}
	r.h.Leases[name] = append(s, LeaderSample{At: r.now(), Holder: holder})
}

// pollInterval is how often the etcd leader and the Leases are sampled:
// the resolution of the detection times.
const pollInterval = 100 * time.Millisecond

// watchEtcdLeader samples the members' view of the leader until ctx ends.
func (r *recorder) watchEtcdLeader(ctx context.Context, etcd *etcdClient, p provider.Provider) {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		var members []provider.Actor
		for _, a := range p.Actors() {
			if a.Role == provider.RoleEtcd && a.Running() {
				members = append(members, a)
			}
		}
		sctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		leader, err := etcd.leader(sctx, members)
		cancel()
		if err != nil {
			leader = ""
		}
		if ctx.Err() != nil {
			return
		}
		r.etcdLeader(leader)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// watchLeases samples the holders of kstep's leader Leases.
func (r *recorder) watchLeases(ctx context.Context, cs kubernetes.Interface) {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		for _, name := range []string{LeaseControllerManager, LeaseScheduler} {
			gctx, cancel := context.WithTimeout(ctx, time.Second)
			l, err := cs.CoordinationV1().Leases(metav1.NamespaceSystem).Get(gctx, name, metav1.GetOptions{})
			cancel()
			if err == nil && l.Spec.HolderIdentity != nil {
				r.lease(name, *l.Spec.HolderIdentity)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// watchNodes records every change of a node's Ready condition.
func (r *recorder) watchNodes(ctx context.Context, cs kubernetes.Interface) {
	ready := map[string]bool{}
	follow(ctx, func(ctx context.Context) (runtime.Object, error) {
		return cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	}, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return cs.CoreV1().Nodes().Watch(ctx, o)
	}, func(obj runtime.Object, deleted bool) {
		n, ok := obj.(*corev1.Node)
		if !ok {
			return
		}
		if deleted {
			delete(ready, n.Name)
			r.mu.Lock()
			r.h.Nodes = append(r.h.Nodes, NodeSample{At: r.now(), Node: n.Name, Gone: true})
			r.mu.Unlock()
			return
		}
		ok = false
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				ok = c.Status == corev1.ConditionTrue
			}
		}
		if prev, seen := ready[n.Name]; seen && prev == ok {
			return
		}
		ready[n.Name] = ok
		r.mu.Lock()
		r.h.Nodes = append(r.h.Nodes, NodeSample{At: r.now(), Node: n.Name, Ready: ok})
		r.mu.Unlock()
	})
}

// readyNodes is how many nodes are Ready now, by the node watch.
func (r *recorder) readyNodes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	state := map[string]bool{}
	for _, s := range r.h.Nodes {
		state[s.Node] = s.Ready
	}
	n := 0
	for _, ok := range state {
		if ok {
			n++
		}
	}
	return n
}

// follow lists, then watches from the list's resourceVersion until ctx
// ends: a stream that ends is resumed from the last resourceVersion seen,
// one that cannot be resumed (410 Gone) is replaced by a new list. apply
// gets every listed and watched object; deleted is set for deletions.
func follow(ctx context.Context, list func(context.Context) (runtime.Object, error),
	watchFrom func(context.Context, metav1.ListOptions) (watch.Interface, error), apply func(obj runtime.Object, deleted bool)) {
	rv := ""
	for ctx.Err() == nil {
		if rv == "" {
			l, err := list(ctx)
			var objs []runtime.Object
			var lm metav1.ListInterface
			if err == nil {
				objs, err = meta.ExtractList(l)
			}
			if err == nil {
				lm, err = meta.ListAccessor(l)
			}
			if err != nil {
				sleep(ctx, 200*time.Millisecond)
				continue
			}
			for _, o := range objs {
				apply(o, false)
			}
			rv = lm.GetResourceVersion()
		}
		w, err := watchFrom(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				rv = ""
			}
			sleep(ctx, 100*time.Millisecond)
			continue
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				rv = ""
				break
			}
			m, err := meta.Accessor(ev.Object)
			if err != nil {
				continue
			}
			rv = m.GetResourceVersion()
			if ev.Type != watch.Bookmark {
				apply(ev.Object, ev.Type == watch.Deleted)
			}
		}
		w.Stop()
	}
}

// probeNamespace holds the probe's writes.
const probeNamespace = "kstep-chaos"

// probeTimeout bounds one probe write, retries included: a write not
// acknowledged by then has failed.
const probeTimeout = 10 * time.Second

// probe writes a ConfigMap every 1/qps until ctx ends. A write whose
// connection broke is retried (on another apiserver if need be) and
// recognized if it had landed (AlreadyExists with the same content); it
// fails only when no attempt succeeded within probeTimeout. Sequential
// probes send each write when the one before it is answered.
func (r *recorder) probe(ctx context.Context, cs kubernetes.Interface, p Probe, clientErrors *atomic.Int64) {
	if p.WriteQPS <= 0 {
		return
	}
	t := time.NewTicker(time.Duration(float64(time.Second) / p.WriteQPS))
	defer t.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	sem := make(chan struct{}, 64)
	if p.Sequential {
		sem = make(chan struct{}, 1)
	}
	for seq := 0; ; seq++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if p.Sequential {
			sem <- struct{}{}
		}
		select {
		case sem <- struct{}{}:
		default:
			if p.Sequential {
				break // the slot is ours
			}
			// 64 writes in flight: the cluster is not answering; this tick's
			// write counts as failed without adding load.
			r.mu.Lock()
			r.h.Writes = append(r.h.Writes, ProbeWrite{Key: fmt.Sprintf("%s/probe-%d", probeNamespace, seq), Sent: r.now(), Err: "64 writes already in flight"})
			r.mu.Unlock()
			continue
		}
		write := func() {
			defer func() { <-sem }()
			w := r.probeWrite(ctx, cs, seq, p.RequestTimeout.Duration, clientErrors)
			if ctx.Err() != nil && w.Acked.IsZero() {
				return // cut short by the end of the run, not by the cluster
			}
			r.mu.Lock()
			r.h.Writes = append(r.h.Writes, w)
			r.mu.Unlock()
		}
		if p.Sequential {
			write()
			continue
		}
		wg.Go(write)
	}
}

func (r *recorder) probeWrite(ctx context.Context, cs kubernetes.Interface, seq int, timeout time.Duration, clientErrors *atomic.Int64) ProbeWrite {
	name := fmt.Sprintf("probe-%d", seq)
	w := ProbeWrite{Key: probeNamespace + "/" + name, Sent: r.now()}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: probeNamespace}, Data: map[string]string{"seq": strconv.Itoa(seq)}}
	wctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	// request times one request to its answer, success or error.
	request := func(f func(context.Context) (*corev1.ConfigMap, error)) (*corev1.ConfigMap, error) {
		rctx, rcancel := context.WithTimeout(wctx, timeout)
		defer rcancel()
		start := r.now()
		got, err := f(rctx)
		w.Done = r.now()
		w.LongestWaitMS = max(w.LongestWaitMS, float64(w.Done.Sub(start))/float64(time.Millisecond))
		return got, err
	}
	for wctx.Err() == nil {
		got, err := request(func(ctx context.Context) (*corev1.ConfigMap, error) {
			return cs.CoreV1().ConfigMaps(probeNamespace).Create(ctx, cm, metav1.CreateOptions{})
		})
		if apierrors.IsAlreadyExists(err) {
			// An earlier attempt landed and its answer was lost.
			got, err = request(func(ctx context.Context) (*corev1.ConfigMap, error) {
				return cs.CoreV1().ConfigMaps(probeNamespace).Get(ctx, name, metav1.GetOptions{})
			})
			if err == nil && got.Data["seq"] != strconv.Itoa(seq) {
				err = fmt.Errorf("configmap %s exists with other content", name)
			}
		}
		if err == nil {
			w.Acked = r.now()
			w.UID = string(got.UID)
			w.RV, _ = strconv.ParseInt(got.ResourceVersion, 10, 64)
			return w
		}
		clientErrors.Add(1)
		w.Err, w.Code = err.Error(), 0
		var st apierrors.APIStatus
		if errors.As(err, &st) {
			w.Code = st.Status().Code
		}
		if w.Code == http.StatusInsufficientStorage {
			// etcd's quota is full: a definitive answer, which trying
			// again cannot change until an operator recovers etcd (a
			// client-go writer does not retry it either).
			return w
		}
		sleep(wctx, 50*time.Millisecond)
	}
	return w
}

func (r *recorder) podEvent(p *corev1.Pod, deleted bool) {
	e := PodEvent{At: r.now(), UID: string(p.UID), Key: p.Namespace + "/" + p.Name, Node: p.Spec.NodeName, Deleted: deleted}
	e.RV, _ = strconv.ParseInt(p.ResourceVersion, 10, 64)
	if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "ReplicaSet" {
		e.Owner = p.Namespace + "/" + ref.Name
	}
	e.Active = !deleted && p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			e.Ready = c.Status == corev1.ConditionTrue
		}
	}
	r.mu.Lock()
	r.h.Pods = append(r.h.Pods, e)
	r.mu.Unlock()
}

// watchReplicaSets records every ReplicaSet's replicas as they change.
func (r *recorder) watchReplicaSets(ctx context.Context, cs kubernetes.Interface) {
	seen := map[string]int32{}
	follow(ctx, func(ctx context.Context) (runtime.Object, error) {
		return cs.AppsV1().ReplicaSets("").List(ctx, metav1.ListOptions{})
	}, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return cs.AppsV1().ReplicaSets("").Watch(ctx, o)
	}, func(obj runtime.Object, deleted bool) {
		rs, ok := obj.(*appsv1.ReplicaSet)
		if !ok {
			return
		}
		key := rs.Namespace + "/" + rs.Name
		n := int32(1)
		if rs.Spec.Replicas != nil {
			n = *rs.Spec.Replicas
		}
		if deleted {
			n = -1
		}
		if prev, ok := seen[key]; ok && prev == n {
			return
		}
		seen[key] = n
		r.mu.Lock()
		r.h.RS = append(r.h.RS, RSEvent{At: r.now(), Key: key, Replicas: n})
		r.mu.Unlock()
	})
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// evictions lists the node lifecycle controller's TaintManagerEviction
// events, each with the node its pod was last seen on.
func evictions(ctx context.Context, cs kubernetes.Interface, pods []PodEvent) ([]Eviction, error) {
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	l, err := cs.CoreV1().Events("").List(lctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	node := map[string]string{}
	for _, p := range pods {
		if p.Node != "" {
			node[p.Key] = p.Node
		}
	}
	var out []Eviction
	for _, e := range l.Items {
		if e.Reason != "TaintManagerEviction" || e.InvolvedObject.Kind != "Pod" {
			continue
		}
		at := e.LastTimestamp.Time
		if at.IsZero() {
			at = e.EventTime.Time
		}
		if at.IsZero() {
			at = e.CreationTimestamp.Time
		}
		key := e.InvolvedObject.Namespace + "/" + e.InvolvedObject.Name
		out = append(out, Eviction{At: at, Pod: key, Node: node[key]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}
