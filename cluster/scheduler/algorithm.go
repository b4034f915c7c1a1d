package scheduler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/cache"
	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
)

// Upstream's bounds on the adaptive share of nodes to find feasible.
const (
	minFeasibleNodesToFind           = 100
	minFeasibleNodesPercentageToFind = 5
)

// ScheduleResult is the algorithm's decision.
type ScheduleResult struct {
	// SuggestedHost is the chosen node.
	SuggestedHost string
	// EvaluatedNodes were filtered; FeasibleNodes of them passed and were
	// scored.
	EvaluatedNodes, FeasibleNodes int
}

// algorithm is the pure part of a scheduling cycle: filter and score the
// snapshot's nodes for one pod, choose one. It runs on the scheduling
// goroutine only (filters and scores fan out to the parallelizer and come
// back); given the same snapshot, start index and random source it always
// makes the same choice, whatever the goroutines' timing.
type algorithm struct {
	snapshot    *cache.Snapshot
	parallel    framework.Parallelizer
	percentage  int32 // the global percentageOfNodesToScore; 0 = adaptive
	rand        *rand.Rand
	nextStart   int
	evaluated   []uint8 // scratch: 0 not evaluated, 1 fits, 2 rejected
	statuses    []*framework.Status
	feasibleBuf []*framework.NodeInfo
}

const (
	notEvaluated uint8 = iota
	fits
	rejected
)

// schedulePod runs one cycle's algorithm over the (already updated)
// snapshot. Doesn't-fit is a *framework.FitError.
func (a *algorithm) schedulePod(ctx context.Context, fwk *framework.Framework, state *framework.CycleState, pod *corev1.Pod) (ScheduleResult, error) {
	if a.snapshot.NumNodes() == 0 {
		return ScheduleResult{}, framework.ErrNoNodesAvailable
	}
	feasible, diagnosis, evaluated, err := a.findNodesThatFit(ctx, fwk, state, pod)
	if err != nil {
		return ScheduleResult{}, err
	}
	if len(feasible) == 0 {
		return ScheduleResult{}, &framework.FitError{Pod: pod, NumAllNodes: a.snapshot.NumNodes(), Diagnosis: diagnosis}
	}
	if len(feasible) == 1 {
		return ScheduleResult{SuggestedHost: feasible[0].Node().Name, EvaluatedNodes: evaluated, FeasibleNodes: 1}, nil
	}
	scores, err := a.prioritizeNodes(ctx, fwk, state, pod, feasible)
	if err != nil {
		return ScheduleResult{}, err
	}
	return ScheduleResult{SuggestedHost: a.selectHost(scores), EvaluatedNodes: evaluated, FeasibleNodes: len(feasible)}, nil
}

// numFeasibleNodesToFind is upstream's adaptive rule: all nodes below 100;
// otherwise percentage% of them (adaptive: 50 − nodes/125, at least 5),
// but at least 100.
func numFeasibleNodesToFind(percentage int32, numAllNodes int) int {
	if numAllNodes < minFeasibleNodesToFind {
		return numAllNodes
	}
	if percentage == 0 {
		percentage = int32(50 - numAllNodes/125)
		if percentage < minFeasibleNodesPercentageToFind {
			percentage = minFeasibleNodesPercentageToFind
		}
	}
	n := numAllNodes * int(percentage) / 100
	if n < minFeasibleNodesToFind {
		return minFeasibleNodesToFind
	}
	return n
}

func (a *algorithm) percentageFor(fwk *framework.Framework) int32 {
	if p := fwk.PercentageOfNodesToScore(); p != nil {
		return *p
	}
	return a.percentage
}

// findNodesThatFit runs PreFilter, then Filter over the nodes from a
// rotating start index until enough feasible nodes are found. Filters run
// in parallel; the result is the first numToFind feasible nodes in
// rotation order, so it does not depend on which goroutine ran first, and
// the start index advances past exactly the nodes that result consumed.
func (a *algorithm) findNodesThatFit(ctx context.Context, fwk *framework.Framework, state *framework.CycleState, pod *corev1.Pod) ([]*framework.NodeInfo, framework.Diagnosis, int, error) {
	diagnosis := framework.Diagnosis{NodeToStatus: framework.NodeToStatus{}}
	nodes := a.snapshot.List()
	n := len(nodes)
	if s := fwk.RunPreFilterPlugins(ctx, state, pod); !s.IsSuccess() {
		if !s.IsRejected() {
			return nil, diagnosis, 0, s.AsError()
		}
		diagnosis.PreFilterMsg = s.Message()
		diagnosis.AddPluginStatus(s)
		for _, ni := range nodes {
			diagnosis.NodeToStatus[ni.Node().Name] = s
		}
		return nil, diagnosis, 0, nil
	}
	// A pod nominated by preemption tries its node first, as upstream's
	// evaluateNominatedNode: the room its victims left is for it.
	if name := pod.Status.NominatedNodeName; name != "" && fwk.HasFilterPlugins() {
		if ni := a.snapshot.Get(name); ni != nil && ni.Node() != nil {
			s := fwk.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
			if s.IsSuccess() {
				a.feasibleBuf = append(a.feasibleBuf[:0], ni)
				return a.feasibleBuf, diagnosis, 1, nil
			}
			if !s.IsRejected() {
				return nil, diagnosis, 0, fmt.Errorf("filtering nominated node %q: %w", name, s.AsError())
			}
		}
	}
	numToFind := numFeasibleNodesToFind(a.percentageFor(fwk), n)
	start := a.nextStart % n
	feasible := a.feasibleBuf[:0]
	if !fwk.HasFilterPlugins() {
		for i := range numToFind {
			feasible = append(feasible, nodes[(start+i)%n])
		}
		a.nextStart = (start + numToFind) % n
		a.feasibleBuf = feasible
		return feasible, diagnosis, numToFind, nil
	}
	if cap(a.evaluated) < n {
		a.evaluated = make([]uint8, n)
		a.statuses = make([]*framework.Status, n)
	}
	evaluated, statuses := a.evaluated[:n], a.statuses[:n]
	clear(evaluated)
	var found atomic.Int64
	a.parallel.UntilStop(ctx, n, func(i int) {
		s := fwk.RunFilterPluginsWithNominatedPods(ctx, state, pod, nodes[(start+i)%n])
		if s.IsSuccess() {
			evaluated[i] = fits
			found.Add(1)
			return
		}
		statuses[i] = s
		evaluated[i] = rejected
	}, func() bool { return found.Load() >= int64(numToFind) })
	if err := ctx.Err(); err != nil {
		return nil, diagnosis, 0, err
	}
	processed := 0
	for i := 0; i < n && len(feasible) < numToFind; i++ {
		if evaluated[i] == notEvaluated {
			break // cannot happen: evaluated nodes are a prefix holding numToFind fits
		}
		processed = i + 1
		if evaluated[i] == fits {
			feasible = append(feasible, nodes[(start+i)%n])
			continue
		}
		if s := statuses[i]; !s.IsRejected() {
			return nil, diagnosis, 0, fmt.Errorf("filtering node %q: %w", nodes[(start+i)%n].Node().Name, s.AsError())
		}
	}
	a.nextStart = (start + processed) % n
	a.feasibleBuf = feasible
	if len(feasible) == 0 {
		for i := range processed {
			s := statuses[i]
			diagnosis.NodeToStatus[nodes[(start+i)%n].Node().Name] = s
			diagnosis.AddPluginStatus(s)
		}
	}
	// statuses is not cleared: an entry is read only where evaluated says
	// this cycle rejected the node, and then this cycle wrote it.
	return feasible, diagnosis, processed, nil
}

// prioritizeNodes runs PreScore and Score and returns the weighted totals.
func (a *algorithm) prioritizeNodes(ctx context.Context, fwk *framework.Framework, state *framework.CycleState, pod *corev1.Pod, feasible []*framework.NodeInfo) ([]framework.NodeScore, error) {
	if !fwk.HasScorePlugins() {
		out := make([]framework.NodeScore, len(feasible))
		for i, ni := range feasible {
			out[i] = framework.NodeScore{Name: ni.Node().Name, Score: 1}
		}
		return out, nil
	}
	if s := fwk.RunPreScorePlugins(ctx, state, pod, feasible); !s.IsSuccess() {
		return nil, s.AsError()
	}
	scores, s := fwk.RunScorePlugins(ctx, state, pod, feasible)
	if !s.IsSuccess() {
		return nil, s.AsError()
	}
	return scores, nil
}

// selectHost picks the highest total; ties are broken uniformly at random
// (reservoir sampling) from the injected source, as upstream.
func (a *algorithm) selectHost(scores []framework.NodeScore) string {
	best, ties := scores[0], 1
	for _, s := range scores[1:] {
		switch {
		case s.Score > best.Score:
			best, ties = s, 1
		case s.Score == best.Score:
			ties++
			if a.rand.IntN(ties) == 0 {
				best = s
			}
		}
	}
	return best.Name
}
