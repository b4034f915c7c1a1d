package defaultpreemption

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	policylisters "k8s.io/client-go/listers/policy/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
)

// Name is the plugin's name in the registry and in configuration.
const Name = "DefaultPreemption"

// Upstream's defaults (DefaultPreemptionArgs): how many candidate nodes a
// dry run looks for before choosing, as a share of the nodes and at least.
const (
	MinCandidateNodesPercentage = 10
	MinCandidateNodesAbsolute   = 100
)

// Upstream's messages.
const (
	msgNever          = "not eligible due to preemptionPolicy=Never."
	msgTerminating    = "not eligible due to a terminating pod on the nominated node."
	msgNotHelpful     = "Preemption is not helpful for scheduling"
	msgNoVictims      = "No preemption victims found for incoming pod"
	ReasonPreempted   = "Preempted"
	preemptionMessage = "%s: preempting to accommodate a higher priority pod"
)

// DefaultPreemption is the plugin.
type DefaultPreemption struct {
	h    framework.Handle
	pdbs policylisters.PodDisruptionBudgetLister // nil: no PDB is known
	// rand picks the dry run's first node; used on the scheduling
	// goroutine only.
	rand *rand.Rand
}

var _ framework.PostFilterPlugin = &DefaultPreemption{}

// New builds the plugin; with an informer factory it watches
// PodDisruptionBudgets.
func New(h framework.Handle) (framework.Plugin, error) {
	pl := &DefaultPreemption{h: h, rand: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))}
	if f := h.SharedInformerFactory(); f != nil {
		pl.pdbs = f.Policy().V1().PodDisruptionBudgets().Lister()
	}
	return pl, nil
}

// Name implements framework.Plugin.
func (*DefaultPreemption) Name() string { return Name }

// Candidate is a node where preemption makes room, and what it costs.
type Candidate struct {
	Node string
	// Victims, most important first.
	Victims []*corev1.Pod
	// NumPDBViolations is how many victims a PodDisruptionBudget does not
	// allow to go.
	NumPDBViolations int
}

// PostFilter implements framework.PostFilterPlugin: upstream's Preempt.
func (pl *DefaultPreemption) PostFilter(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, m framework.NodeToStatus) (string, *framework.Status) {
	pl.h.MetricsRecorder().PreemptionAttempt()
	var pdbs []*policyv1.PodDisruptionBudget
	if pl.pdbs != nil {
		var err error
		if pdbs, err = pl.pdbs.List(labels.Everything()); err != nil {
			return "", framework.AsStatus(fmt.Errorf("listing PodDisruptionBudgets: %w", err))
		}
	}
	return pl.postFilterWith(ctx, state, pod, m, pdbs)
}

// postFilterWith is upstream's Preempt, its message prefixed as upstream's
// PostFilter does ("preemption: ...").
func (pl *DefaultPreemption) postFilterWith(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, m framework.NodeToStatus, pdbs []*policyv1.PodDisruptionBudget) (string, *framework.Status) {
	node, s := pl.preempt(ctx, state, pod, m, pdbs)
	if msg := s.Message(); msg != "" {
		return node, framework.NewStatus(s.Code(), "preemption: "+msg)
	}
	return node, s
}

func (pl *DefaultPreemption) preempt(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, m framework.NodeToStatus, pdbs []*policyv1.PodDisruptionBudget) (string, *framework.Status) {
	if ok, msg := pl.eligible(pod, m); !ok {
		return "", framework.NewStatus(framework.Unschedulable, msg)
	}
	nodes := pl.h.SnapshotLister().List()
	candidates, statuses := pl.FindCandidates(ctx, state, pod, m, pdbs)
	if err := ctx.Err(); err != nil {
		return "", framework.AsStatus(err)
	}
	if len(candidates) == 0 {
		fe := &framework.FitError{Pod: pod, NumAllNodes: len(nodes), Diagnosis: framework.Diagnosis{NodeToStatus: statuses}}
		return "", framework.NewStatus(framework.Unschedulable, fe.Error())
	}
	best := SelectCandidate(candidates)
	pl.h.MetricsRecorder().PreemptionVictims(len(best.Victims))
	if st := pl.prepareCandidate(ctx, best, pod); !st.IsSuccess() {
		return "", st
	}
	return best.Node, nil
}

// eligible is upstream's PodEligibleToPreemptOthers: a pod whose policy is
// Never may not preempt; a pod already nominated to a node where a pod of
// lower priority is still terminating waits for it rather than preempt
// again (unless the node can no longer take it at all).
func (pl *DefaultPreemption) eligible(pod *corev1.Pod, m framework.NodeToStatus) (bool, string) {
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == corev1.PreemptNever {
		return false, msgNever
	}
	name := pod.Status.NominatedNodeName
	if n := pl.h.PodNominator(); name == "" && n != nil {
		// Nominated a moment ago, the status not written or seen yet.
		name = n.NominatedNodeName(pod)
	}
	if name == "" {
		return true, ""
	}
	if s, ok := m[name]; ok && s.Code() == framework.UnschedulableAndUnresolvable {
		return true, ""
	}
	if ni := pl.h.SnapshotLister().Get(name); ni != nil {
		prio := framework.PodPriority(pod)
		for _, pi := range ni.Pods {
			if pi.Pod.DeletionTimestamp != nil && framework.PodPriority(pi.Pod) < prio {
				return false, msgTerminating
			}
		}
	}
	return true, ""
}

// numCandidates is upstream's GetOffsetAndNumCandidates' count: 10% of the
// nodes, at least 100, at most all.
func numCandidates(n int) int {
	c := n * MinCandidateNodesPercentage / 100
	if c < MinCandidateNodesAbsolute {
		c = MinCandidateNodesAbsolute
	}
	return min(c, n)
}

// FindCandidates dry-runs preemption on the nodes where the pod was
// Unschedulable (not UnschedulableAndUnresolvable: no victim helps there),
// from a random start, until enough candidates are found. The statuses
// say why each node is none.
func (pl *DefaultPreemption) FindCandidates(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, m framework.NodeToStatus, pdbs []*policyv1.PodDisruptionBudget) ([]Candidate, framework.NodeToStatus) {
	all := pl.h.SnapshotLister().List()
	statuses := framework.NodeToStatus{}
	var potential []*framework.NodeInfo
	for _, ni := range all {
		name := ni.Node().Name
		if s, ok := m[name]; ok && s.Code() == framework.UnschedulableAndUnresolvable {
			statuses[name] = framework.NewStatus(framework.UnschedulableAndUnresolvable, msgNotHelpful)
			continue
		}
		potential = append(potential, ni)
	}
	if len(potential) == 0 {
		return nil, statuses
	}
	want := numCandidates(len(potential))
	offset := pl.rand.IntN(len(potential))
	var (
		mu                    sync.Mutex
		violating, nonViolate []Candidate
	)
	results := make([]*framework.Status, len(potential))
	pl.h.Parallelizer().UntilStop(ctx, len(potential), func(i int) {
		ni := potential[(offset+i)%len(potential)]
		victims, violations, st := pl.SelectVictimsOnNode(ctx, state, pod, ni.Clone(), pdbs)
		if st.IsSuccess() && len(victims) == 0 {
			st = framework.AsStatus(fmt.Errorf("expected at least one victim pod on node %q", ni.Node().Name))
		}
		if !st.IsSuccess() {
			results[i] = st
			return
		}
		c := Candidate{Node: ni.Node().Name, Victims: victims, NumPDBViolations: violations}
		mu.Lock()
		if violations == 0 {
			nonViolate = append(nonViolate, c)
		} else {
			violating = append(violating, c)
		}
		mu.Unlock()
	}, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(nonViolate) > 0 && len(nonViolate)+len(violating) >= want
	})
	for i, st := range results {
		if st != nil {
			statuses[potential[(offset+i)%len(potential)].Node().Name] = st
		}
	}
	// The parallel run appends in any order: sort for a deterministic
	// choice among equal candidates.
	out := append(nonViolate, violating...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out, statuses
}

// SelectVictimsOnNode is upstream's: remove every pod of lower priority
// from (a copy of) the node; if the pod then fits, give back as many as
// possible, the most important first — those a PodDisruptionBudget
// protects before the others — and keep as victims those that do not fit
// back. It returns the victims, most important first, and how many of
// them violate a budget.
func (pl *DefaultPreemption) SelectVictimsOnNode(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, ni *framework.NodeInfo, pdbs []*policyv1.PodDisruptionBudget) ([]*corev1.Pod, int, *framework.Status) {
	prio := framework.PodPriority(pod)
	var potential []*framework.PodInfo
	for _, pi := range append([]*framework.PodInfo(nil), ni.Pods...) {
		if framework.PodPriority(pi.Pod) < prio {
			potential = append(potential, pi)
			if err := ni.RemovePod(pi.Pod); err != nil {
				return nil, 0, framework.AsStatus(err)
			}
		}
	}
	if len(potential) == 0 {
		return nil, 0, framework.NewStatus(framework.UnschedulableAndUnresolvable, msgNoVictims)
	}
	if st := pl.h.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni); !st.IsSuccess() {
		return nil, 0, st
	}
	sort.SliceStable(potential, func(i, j int) bool { return MoreImportantPod(potential[i].Pod, potential[j].Pod) })
	violatingPods, nonViolatingPods := filterPodsWithPDBViolation(potential, pdbs)
	var victims []*corev1.Pod
	violations := 0
	reprieve := func(pi *framework.PodInfo) (bool, *framework.Status) {
		ni.AddPodInfo(pi)
		st := pl.h.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
		if st.IsSuccess() {
			return true, nil
		}
		if !st.IsRejected() {
			return false, st
		}
		if err := ni.RemovePod(pi.Pod); err != nil {
			return false, framework.AsStatus(err)
		}
		victims = append(victims, pi.Pod)
		return false, nil
	}
	for _, pi := range violatingPods {
		fits, st := reprieve(pi)
		if st != nil {
			return nil, 0, st
		}
		if !fits {
			violations++
		}
	}
	for _, pi := range nonViolatingPods {
		if _, st := reprieve(pi); st != nil {
			return nil, 0, st
		}
	}
	return victims, violations, nil
}

// MoreImportantPod is upstream's: higher priority first, then the pod that
// started earlier.
func MoreImportantPod(a, b *corev1.Pod) bool {
	pa, pb := framework.PodPriority(a), framework.PodPriority(b)
	if pa != pb {
		return pa > pb
	}
	return startTime(a).Before(startTime(b))
}

// startTime is when the pod started; one not started yet counts as now.
func startTime(p *corev1.Pod) time.Time {
	if p.Status.StartTime != nil {
		return p.Status.StartTime.Time
	}
	return time.Now()
}

// filterPodsWithPDBViolation splits pods (in order) into those whose
// eviction a PodDisruptionBudget does not allow and the others, counting
// each budget's allowed disruptions down as it goes, as upstream's. A
// budget with an empty selector selects nothing; a pod the budget already
// lists as disrupted costs it nothing.
func filterPodsWithPDBViolation(pods []*framework.PodInfo, pdbs []*policyv1.PodDisruptionBudget) (violating, nonViolating []*framework.PodInfo) {
	allowed := make([]int32, len(pdbs))
	selectors := make([]labels.Selector, len(pdbs))
	for i, pdb := range pdbs {
		allowed[i] = pdb.Status.DisruptionsAllowed
		if s, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil {
			selectors[i] = s
		}
	}
	for _, pi := range pods {
		p := pi.Pod
		violates := false
		if len(p.Labels) > 0 {
			for i, pdb := range pdbs {
				if pdb.Namespace != p.Namespace || selectors[i] == nil || selectors[i].Empty() || !selectors[i].Matches(labels.Set(p.Labels)) {
					continue
				}
				if _, disrupted := pdb.Status.DisruptedPods[p.Name]; disrupted {
					continue
				}
				allowed[i]--
				if allowed[i] < 0 {
					violates = true
				}
			}
		}
		if violates {
			violating = append(violating, pi)
		} else {
			nonViolating = append(nonViolating, pi)
		}
	}
	return violating, nonViolating
}

// SelectCandidate is upstream's pickOneNodeForPreemption: the fewest PDB
// violations; then the lowest highest-priority victim; then the smallest
// sum of priorities; then the fewest victims; then the node whose most
// important victims started last; then the first.
func SelectCandidate(cs []Candidate) Candidate {
	best := cs
	keep := func(score func(c Candidate) int64) {
		if len(best) <= 1 {
			return
		}
		top := int64(math.MinInt64)
		var out []Candidate
		for _, c := range best {
			switch s := score(c); {
			case s > top:
				top, out = s, []Candidate{c}
			case s == top:
				out = append(out, c)
			}
		}
		best = out
	}
	keep(func(c Candidate) int64 { return -int64(c.NumPDBViolations) })
	keep(func(c Candidate) int64 { return -int64(highestPriority(c.Victims)) })
	keep(func(c Candidate) int64 {
		var sum int64
		for _, v := range c.Victims {
			// Shifted so that every priority adds a positive amount: more
			// victims never sum less.
			sum += int64(framework.PodPriority(v)) + math.MaxInt32 + 1
		}
		return -sum
	})
	keep(func(c Candidate) int64 { return -int64(len(c.Victims)) })
	keep(func(c Candidate) int64 { return earliestStartOfHighest(c.Victims).UnixNano() })
	return best[0]
}

func highestPriority(pods []*corev1.Pod) int32 {
	h := int32(math.MinInt32)
	for _, p := range pods {
		h = max(h, framework.PodPriority(p))
	}
	return h
}

// earliestStartOfHighest is the earliest start among the victims of the
// highest priority.
func earliestStartOfHighest(pods []*corev1.Pod) time.Time {
	h := highestPriority(pods)
	var t time.Time
	for _, p := range pods {
		if framework.PodPriority(p) != h {
			continue
		}
		if s := startTime(p); t.IsZero() || s.Before(t) {
			t = s
		}
	}
	return t
}

// prepareCandidate evicts the victims, as upstream's: each gets the
// DisruptionTarget condition (reason PreemptionByScheduler), is deleted
// gracefully (its own grace period) and gets a Preempted Event; pods of
// lower priority nominated to the node lose their nomination, as they may
// no longer fit there.
func (pl *DefaultPreemption) prepareCandidate(ctx context.Context, c Candidate, pod *corev1.Pod) *framework.Status {
	cs := pl.h.ClientSet()
	if cs == nil {
		return framework.AsStatus(fmt.Errorf("preempting on node %s: no client", c.Node))
	}
	var (
		mu       sync.Mutex
		firstErr error
	)
	pl.h.Parallelizer().Until(ctx, len(c.Victims), func(i int) {
		v := c.Victims[i]
		err := pl.evict(ctx, v, pod)
		if err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
			return
		}
		if r := pl.h.EventRecorder(); r != nil {
			r.Eventf(v, corev1.EventTypeNormal, ReasonPreempted, "Preempted by pod %v on node %v", pod.UID, c.Node)
		}
	})
	if firstErr != nil {
		return framework.AsStatus(firstErr)
	}
	if n := pl.h.PodNominator(); n != nil {
		prio := framework.PodPriority(pod)
		for _, npi := range n.NominatedPodsForNode(c.Node) {
			if npi.Pod.UID == pod.UID || framework.PodPriority(npi.Pod) >= prio {
				continue
			}
			n.DeleteNominatedPodIfExists(npi.Pod)
			if err := clearNomination(ctx, pl, npi.Pod); err != nil && !apierrors.IsNotFound(err) {
				return framework.AsStatus(err)
			}
		}
	}
	return nil
}

func (pl *DefaultPreemption) evict(ctx context.Context, victim, preemptor *corev1.Pod) error {
	pods := pl.h.ClientSet().CoreV1().Pods(victim.Namespace)
	cond := corev1.PodCondition{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: corev1.PodReasonPreemptionByScheduler,
		Message: fmt.Sprintf(preemptionMessage, preemptor.Spec.SchedulerName), LastTransitionTime: metav1.Now(),
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.PodCondition{cond}}})
	if err != nil {
		return err
	}
	if _, err := pods.Patch(ctx, victim.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // gone already
		}
		return fmt.Errorf("preempting %s/%s: condition: %w", victim.Namespace, victim.Name, err)
	}
	// The victim's UID: a pod recreated under its name is not the victim.
	err = pods.Delete(ctx, victim.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &victim.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("preempting %s/%s: %w", victim.Namespace, victim.Name, err)
	}
	return nil
}

func clearNomination(ctx context.Context, pl *DefaultPreemption, pod *corev1.Pod) error {
	if pod.Status.NominatedNodeName == "" {
		return nil
	}
	patch := []byte(`{"status":{"nominatedNodeName":null}}`)
	_, err := pl.h.ClientSet().CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}
