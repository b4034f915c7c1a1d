package chaos

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// ErrNoTarget: the target could not be resolved to a running actor.
var ErrNoTarget = errors.New("no actor for the target")

// resolved is a target at the moment of injection.
type resolved struct {
	actors []string
	// nodes the fault takes down, for node detections and recoveries.
	nodes []string
	// process, when set, is a process inside the one actor (a node's
	// containerd or kubelet), signalled through the provider
	// (Provider.Signal) instead of the actor itself; the actor's own
	// supervisor brings it back.
	process string
	// hollow, when set, is one node's kubelet inside the hollow-nodes
	// actor (actors[0]), stopped and started through its control
	// (hollowctl), the other kubelets running on.
	hollow string
	// api: the fault is API requests only (drain, delete-node,
	// delete-pod) on nodes, or on pod (namespace/name).
	api bool
	pod string
	// workload is a workload fault (kill-pods, scale) on the load's
	// objects, found at injection, between its injection and its undo.
	workload *workloadRun
}

// resolver finds a target's actors now: etcd's member status, the Leases,
// the pods' nodes.
type resolver struct {
	p    provider.Provider
	cs   kubernetes.Interface
	etcd *etcdClient
}

func (r *resolver) byRole(role provider.Role, running bool) []provider.Actor {
	var out []provider.Actor
	for _, a := range r.p.Actors() {
		if a.Role == role && (!running || a.Running()) {
			out = append(out, a)
		}
	}
	return out
}

func (r *resolver) resolve(ctx context.Context, t Target) (resolved, error) {
	return r.resolveFor(ctx, "", t)
}

// resolveFor resolves t for action a: API-level actions resolve from the
// API alone (the node with most pods, the Lease holder's pod).
func (r *resolver) resolveFor(ctx context.Context, a Action, t Target) (resolved, error) {
	switch {
	case a == ActionDeletePod:
		return r.apiLeader(ctx, t)
	case workloadAction(a):
		return resolved{api: true, workload: &workloadRun{}}, nil
	case apiAction(a):
		return r.apiNode(ctx, t)
	}
	switch t {
	case TargetEtcdLeader, TargetEtcdFollower, TargetEtcdQuorum:
		members := r.byRole(provider.RoleEtcd, true)
		leader, err := r.etcd.leader(ctx, members)
		if err != nil {
			return resolved{}, err
		}
		var followers []string
		for _, m := range members {
			if m.Name != leader {
				followers = append(followers, m.Name)
			}
		}
		switch t {
		case TargetEtcdLeader:
			return resolved{actors: []string{leader}}, nil
		case TargetEtcdFollower:
			if len(followers) == 0 {
				return resolved{}, fmt.Errorf("%s: %w: no follower running", t, ErrNoTarget)
			}
			return resolved{actors: followers[len(followers)-1:]}, nil
		default:
			all := len(r.byRole(provider.RoleEtcd, false))
			need := all/2 + 1
			if len(followers)+1 < need {
				return resolved{}, fmt.Errorf("%s: %w: %d members running, a quorum is %d", t, ErrNoTarget, len(followers)+1, need)
			}
			return resolved{actors: append([]string{leader}, followers[:need-1]...)}, nil
		}
	case TargetClient:
		return resolved{actors: []string{clientActor}}, nil
	case TargetEtcdMembers:
		ms := r.byRole(provider.RoleEtcd, true)
		if len(ms) == 0 {
			return resolved{}, fmt.Errorf("%s: %w", t, ErrNoTarget)
		}
		return resolved{actors: names(ms)}, nil
	case TargetAPIServer, TargetAPIServers:
		as := r.byRole(provider.RoleAPIServer, true)
		if len(as) == 0 {
			return resolved{}, fmt.Errorf("%s: %w", t, ErrNoTarget)
		}
		if t == TargetAPIServer {
			// The first: the one every client prefers, so they must fail
			// over.
			return resolved{actors: []string{as[0].Name}}, nil
		}
		return resolved{actors: names(as)}, nil
	case TargetControllerManager, TargetScheduler:
		lease := leaseOf(t)
		l, err := r.cs.CoordinationV1().Leases(metav1.NamespaceSystem).Get(ctx, lease, metav1.GetOptions{})
		if err != nil {
			return resolved{}, fmt.Errorf("%s: lease %s: %w", t, lease, err)
		}
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
			return resolved{}, fmt.Errorf("%s: %w: lease %s has no holder", t, ErrNoTarget, lease)
		}
		// kstep's leader-elected actors run with --name=<actor>, their
		// identity in the Lease.
		id := *l.Spec.HolderIdentity
		for _, a := range r.p.Actors() {
			if a.Name == id {
				return resolved{actors: []string{id}}, nil
			}
		}
		return resolved{}, fmt.Errorf("%s: %w: lease holder %q is no actor of this cluster", t, ErrNoTarget, id)
	case TargetKubelet:
		// Hollow kubelets all live in one actor; without it, a real node's
		// kubelet process (its containers survive, its node supervisor
		// restarts it).
		if hn := r.byRole(provider.RoleHollowNodes, true); len(hn) > 0 {
			nodes, err := r.nodesWithPods(ctx, func(n string) bool { return !r.isRealNode(n) })
			if err != nil {
				return resolved{}, err
			}
			if len(nodes) == 0 {
				return resolved{}, fmt.Errorf("%s: %w: no hollow node runs a pod yet", t, ErrNoTarget)
			}
			// One kubelet among the hollow nodes: the one with most pods.
			node := nodes[0]
			return resolved{actors: []string{hn[0].Name}, nodes: []string{node}, hollow: node}, nil
		}
		res, err := r.realNode(ctx, t)
		res.process = "kubelet"
		return res, err
	case TargetNode:
		return r.realNode(ctx, t)
	case TargetContainerd:
		res, err := r.realNode(ctx, t)
		res.process = "containerd"
		return res, err
	}
	if name, ok := strings.CutPrefix(string(t), string(TargetActorPrefix)); ok {
		for _, a := range r.p.Actors() {
			if a.Name == name {
				return resolved{actors: []string{name}}, nil
			}
		}
		return resolved{}, fmt.Errorf("%s: %w", t, provider.ErrUnknownActor)
	}
	return resolved{}, fmt.Errorf("target %q: %w", t, ErrNoTarget)
}

func (r *resolver) isRealNode(name string) bool {
	for _, a := range r.byRole(provider.RoleNode, false) {
		if a.Name == name {
			return true
		}
	}
	return false
}

// realNode picks the running real node with the most pods.
func (r *resolver) realNode(ctx context.Context, t Target) (resolved, error) {
	nodes, err := r.nodesWithPods(ctx, r.isRealNode)
	if err != nil {
		return resolved{}, err
	}
	running := map[string]bool{}
	for _, a := range r.byRole(provider.RoleNode, true) {
		running[a.Name] = true
	}
	for _, n := range nodes {
		if running[n] {
			return resolved{actors: []string{n}, nodes: []string{n}}, nil
		}
	}
	return resolved{}, fmt.Errorf("%s: %w: no running real node has pods", t, ErrNoTarget)
}

// nodesWithPods lists the nodes keep accepts that run active pods, most
// pods first.
func (r *resolver) nodesWithPods(ctx context.Context, keep func(string) bool) ([]string, error) {
	pods, err := r.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	count := map[string]int{}
	for _, p := range pods.Items {
		if n := p.Spec.NodeName; n != "" && keep(n) && p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			count[n]++
		}
	}
	out := make([]string, 0, len(count))
	for n := range count {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool {
		if count[out[i]] != count[out[j]] {
			return count[out[i]] > count[out[j]]
		}
		return out[i] < out[j]
	})
	return out, nil
}

func names(as []provider.Actor) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.Name
	}
	return out
}
