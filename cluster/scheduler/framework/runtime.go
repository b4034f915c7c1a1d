package framework

import (
	"context"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/kstep-dev/kstep/cluster/scheduler/config"
)

// Options are what a Framework's plugins reach through their Handle.
type Options struct {
	Client       kubernetes.Interface
	Snapshot     NodeInfoLister
	Parallelizer Parallelizer
	// Workloads are the listers Handle.Workloads returns; may be nil.
	Workloads *WorkloadListers
	// PercentageOfNodesToScore is the configuration's global value; the
	// profile's overrides it.
	PercentageOfNodesToScore *int32
	// Informers is the term's informer factory (Handle.SharedInformerFactory).
	Informers informers.SharedInformerFactory
	// Nominator keeps the nominated pods; nil keeps none.
	Nominator PodNominator
	// Metrics takes the plugins' metrics; nil records nothing.
	Metrics MetricsRecorder
}

// Framework runs one profile's plugins. Its Run methods for the scheduling
// cycle (PreFilter through Reserve) are called from one goroutine at a
// time; RunBindPlugins and RunReservePluginsUnreserve may run concurrently
// with them.
type Framework struct {
	profile    string
	opts       Options
	percentage *int32

	preFilter  []PreFilterPlugin
	filter     []FilterPlugin
	postFilter []PostFilterPlugin
	preScore   []PreScorePlugin
	score      []ScorePlugin
	normalize  []ScoreNormalizer // parallel to score; nil entries
	weights    []int64           // parallel to score
	reserve    []ReservePlugin
	bind       []BindPlugin

	// events are the enqueue interests of every plugin that can reject.
	events  map[string][]ClusterEvent
	enabled map[string][]config.Plugin

	// Scratch for RunScorePlugins; the scheduling goroutine owns it.
	scoreBuf [][]NodeScore
	totals   []NodeScore

	// recorder is set by the scheduler before its first cycle.
	recorder record.EventRecorder
}

var _ Handle = &Framework{}

// New builds a profile's plugins from the registry: the defaults (a
// multi-point list in order, with score weights) changed by the profile's
// enabled and disabled sets.
func New(registry Registry, defaults []config.Plugin, profile config.Profile, opts Options) (*Framework, error) {
	f := &Framework{
		profile: profile.SchedulerName, opts: opts, percentage: opts.PercentageOfNodesToScore,
		events: map[string][]ClusterEvent{}, enabled: map[string][]config.Plugin{},
	}
	if profile.PercentageOfNodesToScore != nil {
		f.percentage = profile.PercentageOfNodesToScore
	}
	if f.opts.Parallelizer.Workers == 0 {
		f.opts.Parallelizer = NewParallelizer(DefaultParallelism)
	}
	plugins := profile.Plugins
	if plugins == nil {
		plugins = &config.Plugins{}
	}
	instances := map[string]Plugin{}
	instance := func(name string) (Plugin, error) {
		if p, ok := instances[name]; ok {
			return p, nil
		}
		factory, ok := registry[name]
		if !ok {
			return nil, fmt.Errorf("profile %q: plugin %q is not registered", profile.SchedulerName, name)
		}
		p, err := factory(f)
		if err != nil {
			return nil, fmt.Errorf("profile %q: plugin %q: %w", profile.SchedulerName, name, err)
		}
		instances[name] = p
		return p, nil
	}
	defaultWeight := map[string]int32{}
	for _, d := range defaults {
		defaultWeight[d.Name] = d.Weight
	}

	points := []struct {
		name       string
		set        config.PluginSet
		implements func(Plugin) bool
		add        func(Plugin, int32)
	}{
		{config.PointPreFilter, plugins.PreFilter, is[PreFilterPlugin], func(p Plugin, _ int32) { f.preFilter = append(f.preFilter, p.(PreFilterPlugin)) }},
		{config.PointFilter, plugins.Filter, is[FilterPlugin], func(p Plugin, _ int32) { f.filter = append(f.filter, p.(FilterPlugin)) }},
		{config.PointPostFilter, plugins.PostFilter, is[PostFilterPlugin], func(p Plugin, _ int32) { f.postFilter = append(f.postFilter, p.(PostFilterPlugin)) }},
		{config.PointPreScore, plugins.PreScore, is[PreScorePlugin], func(p Plugin, _ int32) { f.preScore = append(f.preScore, p.(PreScorePlugin)) }},
		{config.PointScore, plugins.Score, is[ScorePlugin], func(p Plugin, w int32) {
			f.score = append(f.score, p.(ScorePlugin))
			n, _ := p.(ScoreNormalizer)
			f.normalize = append(f.normalize, n)
			f.weights = append(f.weights, int64(w))
		}},
		{config.PointReserve, plugins.Reserve, is[ReservePlugin], func(p Plugin, _ int32) { f.reserve = append(f.reserve, p.(ReservePlugin)) }},
		{config.PointBind, plugins.Bind, is[BindPlugin], func(p Plugin, _ int32) { f.bind = append(f.bind, p.(BindPlugin)) }},
	}
	for _, pt := range points {
		disabled := map[string]bool{}
		for _, d := range append(append([]config.Plugin(nil), plugins.MultiPoint.Disabled...), pt.set.Disabled...) {
			disabled[d.Name] = true
		}
		var list []config.Plugin
		upsert := func(e config.Plugin) {
			for i := range list {
				if list[i].Name == e.Name {
					if e.Weight != 0 {
						list[i].Weight = e.Weight
					}
					return
				}
			}
			list = append(list, e)
		}
		for _, d := range defaults {
			if disabled["*"] || disabled[d.Name] {
				continue
			}
			p, err := instance(d.Name)
			if err != nil {
				return nil, err
			}
			if pt.implements(p) {
				upsert(d)
			}
		}
		for _, e := range plugins.MultiPoint.Enabled {
			p, err := instance(e.Name)
			if err != nil {
				return nil, err
			}
			if pt.implements(p) {
				upsert(e)
			}
		}
		for _, e := range pt.set.Enabled {
			p, err := instance(e.Name)
			if err != nil {
				return nil, err
			}
			if !pt.implements(p) {
				return nil, fmt.Errorf("profile %q: plugin %q does not implement the %s extension point", profile.SchedulerName, e.Name, pt.name)
			}
			upsert(e)
		}
		for _, e := range list {
			w := e.Weight
			if w == 0 {
				w = defaultWeight[e.Name]
			}
			if w == 0 {
				w = 1
			}
			e.Weight = w
			pt.add(instances[e.Name], w)
			f.enabled[pt.name] = append(f.enabled[pt.name], e)
		}
	}
	if len(f.bind) == 0 {
		return nil, fmt.Errorf("profile %q: no bind plugin enabled", profile.SchedulerName)
	}
	for name, p := range instances {
		if ext, ok := p.(EnqueueExtensions); ok {
			f.events[name] = ext.EventsToRegister()
		}
	}
	return f, nil
}

func is[T any](p Plugin) bool {
	_, ok := p.(T)
	return ok
}

// ProfileName is the schedulerName this framework serves.
func (f *Framework) ProfileName() string { return f.profile }

// PercentageOfNodesToScore is the profile's value, or the global one.
func (f *Framework) PercentageOfNodesToScore() *int32 { return f.percentage }

// EnabledPlugins lists the plugins per extension point, in run order, with
// the weights in effect.
func (f *Framework) EnabledPlugins() map[string][]config.Plugin { return f.enabled }

// HasFilterPlugins reports whether any Filter is enabled.
func (f *Framework) HasFilterPlugins() bool { return len(f.filter) > 0 }

// HasScorePlugins reports whether any Score is enabled.
func (f *Framework) HasScorePlugins() bool { return len(f.score) > 0 }

// SnapshotLister implements Handle.
func (f *Framework) SnapshotLister() NodeInfoLister { return f.opts.Snapshot }

// ClientSet implements Handle.
func (f *Framework) ClientSet() kubernetes.Interface { return f.opts.Client }

// Parallelizer implements Handle.
func (f *Framework) Parallelizer() Parallelizer { return f.opts.Parallelizer }

// Workloads implements Handle.
func (f *Framework) Workloads() *WorkloadListers { return f.opts.Workloads }

// SharedInformerFactory implements Handle.
func (f *Framework) SharedInformerFactory() informers.SharedInformerFactory { return f.opts.Informers }

// EventRecorder implements Handle.
func (f *Framework) EventRecorder() record.EventRecorder { return f.recorder }

// SetEventRecorder gives the plugins the scheduler's recorder; call it
// before the first cycle.
func (f *Framework) SetEventRecorder(r record.EventRecorder) { f.recorder = r }

// HasPostFilterPlugins reports whether any PostFilter is enabled.
func (f *Framework) HasPostFilterPlugins() bool { return len(f.postFilter) > 0 }

// PodMayFitAfter reports whether a pod rejected by the plugins in rejected
// may fit after ev: true if any of them registered ev, or if no plugin is
// known to have rejected it (an error, or a plugin without interests).
func (f *Framework) PodMayFitAfter(rejected map[string]bool, ev ClusterEvent) bool {
	if len(rejected) == 0 || ev.Resource == WildCard {
		return true
	}
	for name := range rejected {
		interests, ok := f.events[name]
		if !ok {
			return true
		}
		for _, in := range interests {
			if in.Match(ev) {
				return true
			}
		}
	}
	return false
}

// RunPreFilterPlugins runs every PreFilter. A rejection stops at once and
// carries the plugin's name; Skip leaves the plugin's Filter out of this
// cycle.
func (f *Framework) RunPreFilterPlugins(ctx context.Context, state *CycleState, pod *corev1.Pod) *Status {
	var skip map[string]bool
	defer func() {
		state.filters, state.filtersSet = state.filters[:0], true
		for _, p := range f.filter {
			if !skip[p.Name()] {
				state.filters = append(state.filters, p)
			}
		}
	}()
	for _, p := range f.preFilter {
		s := p.PreFilter(ctx, state, pod)
		switch {
		case s.IsSuccess():
		case s.IsSkip():
			if skip == nil {
				skip = map[string]bool{}
			}
			skip[p.Name()] = true
		case s.IsRejected():
			return s.WithPlugin(p.Name())
		default:
			return AsStatus(fmt.Errorf("running PreFilter plugin %q: %w", p.Name(), s.AsError())).WithPlugin(p.Name())
		}
	}
	return nil
}

// RunFilterPlugins runs the Filters (but those whose PreFilter skipped)
// for one node until the first that does not pass. Safe for concurrent use
// over different nodes.
func (f *Framework) RunFilterPlugins(ctx context.Context, state *CycleState, pod *corev1.Pod, ni *NodeInfo) *Status {
	filters := state.filters
	if !state.filtersSet {
		filters = f.filter
	}
	for _, p := range filters {
		s := p.Filter(ctx, state, pod, ni)
		if s.IsSuccess() {
			continue
		}
		if !s.IsRejected() {
			return AsStatus(fmt.Errorf("running Filter plugin %q: %w", p.Name(), s.AsError())).WithPlugin(p.Name())
		}
		return s.WithPlugin(p.Name())
	}
	return nil
}

// RunPostFilterPlugins runs PostFilters until one succeeds.
func (f *Framework) RunPostFilterPlugins(ctx context.Context, state *CycleState, pod *corev1.Pod, statuses NodeToStatus) (string, *Status) {
	var reasons []string
	for _, p := range f.postFilter {
		node, s := p.PostFilter(ctx, state, pod, statuses)
		if s.IsSuccess() {
			return node, nil
		}
		if !s.IsRejected() {
			return "", AsStatus(fmt.Errorf("running PostFilter plugin %q: %w", p.Name(), s.AsError())).WithPlugin(p.Name())
		}
		reasons = append(reasons, s.Reasons()...)
	}
	return "", NewStatus(Unschedulable, reasons...)
}

// RunPreScorePlugins runs every PreScore; Skip leaves the plugin's Score
// out of this cycle.
func (f *Framework) RunPreScorePlugins(ctx context.Context, state *CycleState, pod *corev1.Pod, nodes []*NodeInfo) *Status {
	var skip map[string]bool
	defer func() {
		state.scores, state.scoresSet = state.scores[:0], true
		for j, p := range f.score {
			if !skip[p.Name()] {
				state.scores = append(state.scores, j)
			}
		}
	}()
	for _, p := range f.preScore {
		s := p.PreScore(ctx, state, pod, nodes)
		switch {
		case s.IsSuccess():
		case s.IsSkip():
			if skip == nil {
				skip = map[string]bool{}
			}
			skip[p.Name()] = true
		default:
			return AsStatus(fmt.Errorf("running PreScore plugin %q: %w", p.Name(), s.AsError())).WithPlugin(p.Name())
		}
	}
	return nil
}

// RunScorePlugins scores nodes with every Score plugin (but those whose
// PreScore skipped) in parallel over nodes, normalizes each plugin's
// scores, and returns the weighted sum per node, in the order of nodes.
// The returned slice is reused by the next call.
func (f *Framework) RunScorePlugins(ctx context.Context, state *CycleState, pod *corev1.Pod, nodes []*NodeInfo) ([]NodeScore, *Status) {
	n := len(nodes)
	if cap(f.totals) < n {
		f.totals = make([]NodeScore, n)
	}
	totals := f.totals[:n]
	for i, ni := range nodes {
		totals[i] = NodeScore{Name: ni.Node().Name}
	}
	if len(f.scoreBuf) < len(f.score) {
		f.scoreBuf = make([][]NodeScore, len(f.score))
	}
	active := state.scores
	if !state.scoresSet {
		active = make([]int, len(f.score))
		for j := range active {
			active[j] = j
		}
	}
	for _, j := range active {
		if cap(f.scoreBuf[j]) < n {
			f.scoreBuf[j] = make([]NodeScore, n)
		}
		f.scoreBuf[j] = f.scoreBuf[j][:n]
	}
	if len(active) == 0 {
		return totals, nil
	}
	var mu sync.Mutex
	var firstErr *Status
	f.opts.Parallelizer.Until(ctx, n, func(i int) {
		ni := nodes[i]
		for _, j := range active {
			p := f.score[j]
			s, st := p.Score(ctx, state, pod, ni)
			if !st.IsSuccess() {
				mu.Lock()
				if firstErr == nil {
					firstErr = AsStatus(fmt.Errorf("running Score plugin %q on node %q: %w", p.Name(), ni.Node().Name, st.AsError())).WithPlugin(p.Name())
				}
				mu.Unlock()
				return
			}
			f.scoreBuf[j][i] = NodeScore{Name: totals[i].Name, Score: s}
		}
	})
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, AsStatus(err)
	}
	for _, j := range active {
		p, scores := f.score[j], f.scoreBuf[j]
		if norm := f.normalize[j]; norm != nil {
			if st := norm.NormalizeScore(ctx, state, pod, scores); !st.IsSuccess() {
				return nil, AsStatus(fmt.Errorf("running NormalizeScore of plugin %q: %w", p.Name(), st.AsError())).WithPlugin(p.Name())
			}
		}
		w := f.weights[j]
		for i := range scores {
			s := scores[i].Score
			if s < MinNodeScore || s > MaxNodeScore {
				return nil, AsStatus(fmt.Errorf("plugin %q scored node %q %d, outside [%d, %d]", p.Name(), scores[i].Name, s, MinNodeScore, MaxNodeScore)).WithPlugin(p.Name())
			}
			totals[i].Score += s * w
		}
	}
	return totals, nil
}

// RunReservePluginsReserve runs every Reserve; on failure the caller runs
// Unreserve.
func (f *Framework) RunReservePluginsReserve(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) *Status {
	for _, p := range f.reserve {
		if s := p.Reserve(ctx, state, pod, nodeName); !s.IsSuccess() {
			if s.IsRejected() {
				return s.WithPlugin(p.Name())
			}
			return AsStatus(fmt.Errorf("running Reserve plugin %q: %w", p.Name(), s.AsError())).WithPlugin(p.Name())
		}
	}
	return nil
}

// RunReservePluginsUnreserve runs every Unreserve, in reverse order.
func (f *Framework) RunReservePluginsUnreserve(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) {
	for _, p := range slices.Backward(f.reserve) {
		p.Unreserve(ctx, state, pod, nodeName)
	}
}

// RunBindPlugins asks each binder in turn until one does not Skip.
func (f *Framework) RunBindPlugins(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) *Status {
	for _, p := range f.bind {
		s := p.Bind(ctx, state, pod, nodeName)
		if s.IsSkip() {
			continue
		}
		if !s.IsSuccess() {
			if s.IsRejected() {
				return s.WithPlugin(p.Name())
			}
			return AsStatus(fmt.Errorf("running Bind plugin %q: %w", p.Name(), s.AsError())).WithPlugin(p.Name())
		}
		return nil
	}
	return NewStatus(Error, fmt.Sprintf("no bind plugin bound pod %s/%s", pod.Namespace, pod.Name))
}
