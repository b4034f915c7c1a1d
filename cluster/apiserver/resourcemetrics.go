package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/kstep-dev/kstep/cluster/storage"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// The resource metrics API, metrics.k8s.io/v1beta1 pods and nodes, built
// in (kubectl top reads it): every answer is made from the kubelets'
// /stats/summary at request time, as metrics-server serves it, and nothing
// is stored. Reads only: get and list, RBAC on pods and nodes in group
// metrics.k8s.io.
//
// A list fans out to every node it covers, so it is bounded: at most
// metricsConcurrency summaries are fetched at once across all requests of
// this apiserver, each within metricsNodeTimeout and maxSummaryBytes, the
// whole within metricsListTimeout. A node whose kubelet fails or is slow is
// left out of the answer, as metrics-server leaves it out.

var metricsGV = metricsv1beta1.SchemeGroupVersion

const (
	metricsConcurrency = 16
	metricsNodeTimeout = 5 * time.Second
	metricsListTimeout = 20 * time.Second
	maxSummaryBytes    = 8 << 20
	// metricsWindow is the window a usage rate is reported over: the
	// kubelet's rate is its stats interval's (cadvisor's housekeeping,
	// CRI's sampling), about 10 s.
	metricsWindow = 10 * time.Second
)

// metricsSlots is every apiserver's bound on summaries fetched at once.
var metricsSlots = make(chan struct{}, metricsConcurrency)

func metricsAPIResources() []metav1.APIResource {
	return []metav1.APIResource{
		{Name: "nodes", Kind: "NodeMetrics", Verbs: []string{"get", "list"}},
		{Name: "pods", Namespaced: true, Kind: "PodMetrics", Verbs: []string{"get", "list"}},
	}
}

// metricsResources are the resources metrics.k8s.io serves.
var metricsResources = map[string]bool{"pods": true, "nodes": true}

// serveResourceMetrics serves /apis/metrics.k8s.io/v1beta1/...
func (s *Server) serveResourceMetrics(w http.ResponseWriter, r *http.Request, ri *requestInfo) {
	gr := metricsGV.WithResource(ri.Resource).GroupResource()
	if !metricsResources[ri.Resource] || ri.Subresource != "" || (ri.Resource == "nodes" && ri.Namespace != "") {
		writeError(w, notFoundPath(r.URL.Path))
		return
	}
	if ri.Verb != "get" && ri.Verb != "list" {
		writeError(w, apierrors.NewMethodNotSupported(gr, ri.Verb))
		return
	}
	user, ok := userFrom(r.Context())
	if !ok {
		writeError(w, apierrors.NewUnauthorized("Unauthorized"))
		return
	}
	attrs := Attributes{User: user, Verb: ri.Verb, APIGroup: metricsGV.Group, Resource: ri.Resource, Namespace: ri.Namespace, Name: ri.Name}
	if err := s.chain.Authz.Authorize(r.Context(), attrs); err != nil {
		writeError(w, apierrors.NewForbidden(gr, ri.Name, err))
		return
	}
	if s.kubelets == nil {
		writeError(w, errNoKubeletClient)
		return
	}
	filter, err := metricsFilter(r, ri)
	if err != nil {
		writeError(w, err)
		return
	}
	var out any
	if ri.Resource == "nodes" {
		out, err = s.nodeMetrics(r.Context(), ri, filter)
	} else {
		out, err = s.podMetrics(r.Context(), ri, filter)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// metricsFilter is a list's selection: namespace, labels, and the
// metadata.name and metadata.namespace fields metrics-server accepts.
func metricsFilter(r *http.Request, ri *requestInfo) (storage.Filter, error) {
	f := storage.Filter{Namespace: ri.Namespace}
	q := r.URL.Query()
	if v := q.Get("labelSelector"); v != "" {
		sel, err := labels.Parse(v)
		if err != nil {
			return f, badRequest("unable to parse requirement: %v", err)
		}
		f.Label = sel
	}
	if v := q.Get("fieldSelector"); v != "" {
		sel, err := fields.ParseSelector(v)
		if err != nil {
			return f, badRequest("invalid field selector %q: %v", v, err)
		}
		for _, req := range sel.Requirements() {
			if req.Field != "metadata.name" && req.Field != "metadata.namespace" {
				return f, badRequest("field label not supported: %s", req.Field)
			}
		}
		f.Field = sel
	}
	return f, nil
}

func (s *Server) nodeMetrics(ctx context.Context, ri *requestInfo, f storage.Filter) (any, error) {
	res := s.resources[corev1.SchemeGroupVersion.WithResource("nodes")]
	gr := metricsGV.WithResource("nodes").GroupResource()
	var nodes []*corev1.Node
	if ri.Name != "" {
		e, ok := s.cacher(res).Get(res.key("", ri.Name))
		if !ok {
			return nil, apierrors.NewNotFound(gr, ri.Name)
		}
		nodes = append(nodes, e.Object().(*corev1.Node))
	} else {
		entries, _, err := s.cacher(res).List(ctx, 0, f)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		for _, e := range entries {
			nodes = append(nodes, e.Object().(*corev1.Node))
		}
	}
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	sums := s.summaries(ctx, names)
	now := metav1.NewTime(s.now())
	list := &metricsv1beta1.NodeMetricsList{TypeMeta: metav1.TypeMeta{Kind: "NodeMetricsList", APIVersion: metricsGV.String()}, Items: []metricsv1beta1.NodeMetrics{}}
	for _, n := range nodes {
		sum := sums[n.Name]
		if sum == nil {
			continue
		}
		usage, ts, ok := usageOf(sum.Node.CPU, sum.Node.Memory)
		if !ok {
			continue
		}
		list.Items = append(list.Items, metricsv1beta1.NodeMetrics{
			ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels, CreationTimestamp: now},
			Timestamp:  ts, Window: window(ts, sum.Node.StartTime), Usage: usage,
		})
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	if ri.Name == "" {
		return list, nil
	}
	if len(list.Items) == 0 {
		return nil, apierrors.NewNotFound(gr, ri.Name)
	}
	m := list.Items[0]
	m.TypeMeta = metav1.TypeMeta{Kind: "NodeMetrics", APIVersion: metricsGV.String()}
	return &m, nil
}

func (s *Server) podMetrics(ctx context.Context, ri *requestInfo, f storage.Filter) (any, error) {
	res := s.resources[corev1.SchemeGroupVersion.WithResource("pods")]
	gr := metricsGV.WithResource("pods").GroupResource()
	var pods []*corev1.Pod
	if ri.Name != "" {
		e, ok := s.cacher(res).Get(res.key(ri.Namespace, ri.Name))
		if !ok {
			return nil, apierrors.NewNotFound(gr, ri.Name)
		}
		pods = append(pods, e.Object().(*corev1.Pod))
	} else {
		entries, _, err := s.cacher(res).List(ctx, 0, f)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		for _, e := range entries {
			pods = append(pods, e.Object().(*corev1.Pod))
		}
	}
	// Only the nodes the selected pods run on are asked.
	var names []string
	seen := map[string]bool{}
	for _, p := range pods {
		if n := p.Spec.NodeName; n != "" && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	sums := s.summaries(ctx, names)
	type podKey struct{ namespace, name string }
	stats := map[podKey]*statsv1alpha1.PodStats{}
	for _, sum := range sums {
		for i := range sum.Pods {
			ps := &sum.Pods[i]
			stats[podKey{ps.PodRef.Namespace, ps.PodRef.Name}] = ps
		}
	}
	now := metav1.NewTime(s.now())
	list := &metricsv1beta1.PodMetricsList{TypeMeta: metav1.TypeMeta{Kind: "PodMetricsList", APIVersion: metricsGV.String()}, Items: []metricsv1beta1.PodMetrics{}}
	for _, p := range pods {
		ps := stats[podKey{p.Namespace, p.Name}]
		if ps == nil || (ps.PodRef.UID != "" && ps.PodRef.UID != string(p.UID)) {
			continue
		}
		m, ok := podMetricsOf(p, ps, now)
		if ok {
			list.Items = append(list.Items, m)
		}
	}
	sort.Slice(list.Items, func(i, j int) bool {
		a, b := list.Items[i], list.Items[j]
		return a.Namespace < b.Namespace || (a.Namespace == b.Namespace && a.Name < b.Name)
	})
	if ri.Name == "" {
		return list, nil
	}
	if len(list.Items) == 0 {
		return nil, apierrors.NewNotFound(gr, ri.Name)
	}
	m := list.Items[0]
	m.TypeMeta = metav1.TypeMeta{Kind: "PodMetrics", APIVersion: metricsGV.String()}
	return &m, nil
}

// podMetricsOf is a pod's metrics; a pod one of whose containers has no
// usage yet has none (metrics-server's rule).
func podMetricsOf(p *corev1.Pod, ps *statsv1alpha1.PodStats, now metav1.Time) (metricsv1beta1.PodMetrics, bool) {
	m := metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: p.Labels, CreationTimestamp: now}}
	if len(ps.Containers) == 0 {
		return m, false
	}
	for _, c := range ps.Containers {
		usage, ts, ok := usageOf(c.CPU, c.Memory)
		if !ok {
			return m, false
		}
		if ts.After(m.Timestamp.Time) {
			m.Timestamp = ts
		}
		if w := window(ts, c.StartTime); m.Window.Duration == 0 || w.Duration < m.Window.Duration {
			m.Window = w
		}
		m.Containers = append(m.Containers, metricsv1beta1.ContainerMetrics{Name: c.Name, Usage: usage})
	}
	sort.Slice(m.Containers, func(i, j int) bool { return m.Containers[i].Name < m.Containers[j].Name })
	return m, true
}

// usageOf is cpu (the kubelet's rate in nanocores) and memory (the
// working set) and when they were sampled.
func usageOf(cpu *statsv1alpha1.CPUStats, mem *statsv1alpha1.MemoryStats) (corev1.ResourceList, metav1.Time, bool) {
	if cpu == nil || mem == nil || cpu.UsageNanoCores == nil || mem.WorkingSetBytes == nil {
		return nil, metav1.Time{}, false
	}
	ts := cpu.Time
	if mem.Time.After(ts.Time) {
		ts = mem.Time
	}
	return corev1.ResourceList{
		corev1.ResourceCPU:    *kresource.NewScaledQuantity(int64(*cpu.UsageNanoCores), -9),
		corev1.ResourceMemory: *kresource.NewQuantity(int64(*mem.WorkingSetBytes), kresource.BinarySI),
	}, ts, true
}

// window is metricsWindow, or less for what started within it.
func window(ts, start metav1.Time) metav1.Duration {
	w := metricsWindow
	if !start.IsZero() {
		if up := ts.Sub(start.Time); up > 0 && up < w {
			w = up
		}
	}
	return metav1.Duration{Duration: w}
}

// summaries fetches the nodes' summaries, bounded (see above); a node that
// fails is missing from the map.
func (s *Server) summaries(ctx context.Context, nodes []string) map[string]*statsv1alpha1.Summary {
	ctx, cancel := context.WithTimeout(ctx, metricsListTimeout)
	defer cancel()
	out := make(map[string]*statsv1alpha1.Summary, len(nodes))
	var mu sync.Mutex
	work := make(chan string)
	var wg sync.WaitGroup
	for range min(metricsConcurrency, len(nodes)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for node := range work {
				select {
				case metricsSlots <- struct{}{}:
				case <-ctx.Done():
					continue
				}
				sum, err := s.fetchSummary(ctx, node)
				<-metricsSlots
				if err != nil {
					s.log.Debug("metrics: node left out", "node", node, "err", err)
					continue
				}
				mu.Lock()
				out[node] = sum
				mu.Unlock()
			}
		}()
	}
	for _, n := range nodes {
		select {
		case work <- n:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	return out
}

func (s *Server) fetchSummary(ctx context.Context, node string) (*statsv1alpha1.Summary, error) {
	ctx, cancel := context.WithTimeout(ctx, metricsNodeTimeout)
	defer cancel()
	loc, rt, err := s.kubeletLocation(node)
	if err != nil {
		return nil, err
	}
	loc.Path, loc.RawQuery = "/stats/summary", "only_cpu_and_memory=true"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, kubeletRefusal(resp, schema.GroupResource{Resource: "nodes/stats"}, node)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxSummaryBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxSummaryBytes {
		return nil, fmt.Errorf("summary of node %q is larger than %d bytes", node, maxSummaryBytes)
	}
	sum := &statsv1alpha1.Summary{}
	if err := json.Unmarshal(body, sum); err != nil {
		return nil, fmt.Errorf("summary of node %q: %w", node, err)
	}
	return sum, nil
}
