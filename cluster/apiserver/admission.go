package apiserver

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/kstep-dev/kstep/cluster/apiserver/admission"
	"github.com/kstep-dev/kstep/cluster/storage"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	sigsjson "sigs.k8s.io/json"
)

// The admission plugins kstep runs after defaulting, in upstream's order:
// mutating LimitRanger, Priority (priority.go), DefaultTolerationSeconds,
// MutatingAdmissionWebhook; validating LimitRanger, Priority,
// ValidatingAdmissionWebhook; then ResourceQuota,
// which is held together with the write (quotaGate, below). The decisions
// are package admission's; this file feeds them from the watch caches, so
// no plugin reads etcd per request, and a namespace without LimitRanges,
// quotas or webhooks pays a few map lookups.

// addAdmission appends the plugins that need the server's caches.
func (s *Server) addAdmission() {
	lr := &limitRanger{s: s}
	wh := &webhooks{s: s, client: admission.Client{MaxObjectBytes: s.opts.MaxRequestBytes}}
	pr := &priorityPlugin{s: s}
	s.chain.Mutating = append(s.chain.Mutating, lr, pr,
		defaultTolerations{notReady: s.opts.DefaultNotReadyTolerationSeconds, unreachable: s.opts.DefaultUnreachableTolerationSeconds},
		mutatingWebhooks{wh})
	s.chain.Validating = append(s.chain.Validating, lr, pr, validatingWebhooks{wh})
	s.quota = &quotaGate{s: s, namespaces: map[string]*quotaNamespace{}}
}

// cachedIn lists a resource's cached objects in a namespace ("" for all)
// without waiting: admission reads what the cache holds now.
func (s *Server) cachedIn(resource, namespace string) []runtime.Object {
	c := s.cachers[resource]
	if c == nil {
		return nil
	}
	select {
	case <-c.Ready():
	default:
		return nil
	}
	entries, _, err := c.List(context.Background(), 0, storage.Filter{Namespace: namespace})
	if err != nil {
		return nil
	}
	out := make([]runtime.Object, len(entries))
	for i, e := range entries {
		out[i] = e.Object()
	}
	return out
}

func isPodCreate(req *AdmissionRequest) (*corev1.Pod, bool) {
	if req.Operation != Create || req.Subresource != "" || req.Resource.Group != "" || req.Resource.Resource != "pods" {
		return nil, false
	}
	p, ok := req.Object.(*corev1.Pod)
	return p, ok
}

// defaultTolerations is upstream's DefaultTolerationSeconds.
type defaultTolerations struct{ notReady, unreachable int64 }

func (d defaultTolerations) Admit(_ context.Context, req *AdmissionRequest) error {
	if pod, ok := isPodCreate(req); ok {
		admission.DefaultTolerations(pod, d.notReady, d.unreachable)
	}
	return nil
}

// limitRanger applies the namespace's LimitRanges to new pods: defaults
// when mutating, bounds when validating.
type limitRanger struct{ s *Server }

func (l *limitRanger) ranges(ns string) []*corev1.LimitRange {
	objs := l.s.cachedIn("limitranges", ns)
	out := make([]*corev1.LimitRange, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(*corev1.LimitRange))
	}
	return out
}

func (l *limitRanger) Admit(_ context.Context, req *AdmissionRequest) error {
	if pod, ok := isPodCreate(req); ok {
		if rs := l.ranges(req.Namespace); len(rs) > 0 {
			admission.ApplyLimitRangeDefaults(pod, rs)
		}
	}
	return nil
}

func (l *limitRanger) Validate(_ context.Context, req *AdmissionRequest) error {
	pod, ok := isPodCreate(req)
	if !ok {
		return nil
	}
	rs := l.ranges(req.Namespace)
	if len(rs) == 0 {
		return nil
	}
	if msgs := admission.ValidateLimitRanges(pod, rs); len(msgs) > 0 {
		if n := len(msgs); n > maxCauses { // NewAggregate's message is quadratic in them
			msgs = append(msgs[:maxCauses:maxCauses], fmt.Sprintf("and %d more", n-maxCauses))
		}
		errs := make([]error, len(msgs))
		for i, m := range msgs {
			errs[i] = errorString(m)
		}
		return apierrors.NewForbidden(req.Resource.GroupResource(), req.Name, utilerrors.NewAggregate(errs))
	}
	return nil
}

type errorString string

func (e errorString) Error() string { return string(e) }

// quotaGate is upstream's ResourceQuota admission for creates of every
// namespaced resource. A create is charged to each quota of its namespace
// that limits something it uses (admission.Requested) by a compare-and-swap
// of the quota's status.used in etcd, before the object is written; a
// conflict is judged again on etcd's copy. Two creates racing for the last
// unit, on one apiserver or on several, cannot both be charged. A quota whose
// status.used lacks a name (its controller has not counted yet) is counted
// here first, from the watch cache, so a slow or absent controller never
// lets an object past a quota. Creates in one namespace are serialized
// within one apiserver, so they do not conflict among themselves. Usage
// goes down only by the quota controller's recount (deletes, terminal pods),
// as upstream; a dry run is checked and charges nothing.
type quotaGate struct {
	s          *Server
	mu         sync.Mutex
	namespaces map[string]*quotaNamespace
}

type quotaNamespace struct {
	mu sync.Mutex
	// written are the quotas as this apiserver last wrote them: newer than
	// the watch cache until it catches up.
	written map[string]*corev1.ResourceQuota
}

// maxQuotaConflicts bounds the compare-and-swap retries of one charge.
const maxQuotaConflicts = 16

func quotaRV(q *corev1.ResourceQuota) int64 {
	rv, _ := strconv.ParseInt(q.ResourceVersion, 10, 64)
	return rv
}

// admit charges a new object of res to its namespace's quotas, or refuses
// it with upstream's 403.
func (g *quotaGate) admit(ctx context.Context, res *resource, obj runtime.Object, dryRun bool) error {
	if !res.namespaced {
		return nil
	}
	m := objectMeta(obj)
	cached := g.s.cachedIn("resourcequotas", m.Namespace)
	if len(cached) == 0 {
		return nil
	}
	gr := res.gvr.GroupResource()
	forbidden := func(err error) error { return apierrors.NewForbidden(gr, m.Name, err) }
	var mine []*corev1.ResourceQuota
	for _, o := range cached {
		q := o.(*corev1.ResourceQuota)
		if !admission.Matches(q, gr, obj) {
			continue // its scopes leave obj out
		}
		if err := admission.Constraints(q.Name, q.Spec.Hard, obj); err != nil {
			return forbidden(err)
		}
		if len(admission.Requested(gr, obj, q.Spec.Hard)) > 0 {
			mine = append(mine, q)
		}
	}
	if len(mine) == 0 {
		return nil
	}
	g.mu.Lock()
	st := g.namespaces[m.Namespace]
	if st == nil {
		st = &quotaNamespace{written: map[string]*corev1.ResourceQuota{}}
		g.namespaces[m.Namespace] = st
	}
	g.mu.Unlock()
	st.mu.Lock()
	defer st.mu.Unlock()
	for i, q := range mine {
		if w := st.written[q.Name]; w != nil && w.UID == q.UID && quotaRV(w) > quotaRV(q) {
			mine[i] = w
		}
	}
	// Every quota is checked before any is charged: a refusal by one
	// charges none.
	charged := make([]*corev1.ResourceQuota, len(mine))
	for i, q := range mine {
		next, err := g.charge(ctx, gr, q, obj)
		if err != nil {
			return err
		}
		charged[i] = next
	}
	if dryRun {
		return nil
	}
	qres := g.s.resources[corev1.SchemeGroupVersion.WithResource("resourcequotas")]
	for i, next := range charged {
		cur := mine[i]
		for attempt := 0; ; attempt++ {
			val, err := encodeStored(qres, next)
			if err != nil {
				return apierrors.NewInternalError(err)
			}
			key := qres.key(cur.Namespace, cur.Name)
			rev, kv, err := g.s.store.Update(ctx, key, val, quotaRV(cur))
			if err == nil {
				next.ResourceVersion = itoa(rev)
				st.written[next.Name] = next
				break
			}
			if errors.Is(err, storage.ErrNotFound) {
				delete(st.written, cur.Name)
				break // the quota is gone: nothing to charge
			}
			if !errors.Is(err, storage.ErrConflict) {
				return storageError(err, qres.gvr.GroupResource(), cur.Name)
			}
			if attempt == maxQuotaConflicts {
				return apierrors.NewConflict(qres.gvr.GroupResource(), cur.Name, fmt.Errorf("quota status kept changing: %d tries", attempt+1))
			}
			o, derr := decodeStored(qres, kv.Value, kv.ModRev)
			if derr != nil {
				return apierrors.NewInternalError(derr)
			}
			cur = o.(*corev1.ResourceQuota)
			if next, err = g.charge(ctx, gr, cur, obj); err != nil {
				return err
			}
		}
	}
	return nil
}

// charge returns q with obj's usage added to status.used, or the 403 that
// refuses obj. Names of spec.hard that count gr but are missing from
// status.used are counted first from the watch cache.
func (g *quotaGate) charge(ctx context.Context, gr schema.GroupResource, q *corev1.ResourceQuota, obj runtime.Object) (*corev1.ResourceQuota, error) {
	req := admission.Requested(gr, obj, q.Spec.Hard)
	used := q.Status.Used.DeepCopy()
	var unknown bool
	for k := range req {
		if _, ok := used[k]; !ok {
			unknown = true
		}
	}
	if unknown {
		counted, err := g.count(ctx, gr, q)
		if err != nil {
			return nil, err
		}
		if used == nil {
			used = corev1.ResourceList{}
		}
		for k, v := range counted {
			if _, ok := used[k]; !ok {
				used[k] = v
			}
		}
	}
	next, err := admission.Charge(q.Name, q.Spec.Hard, used, req)
	if err != nil {
		return nil, apierrors.NewForbidden(gr, objectMeta(obj).Name, err)
	}
	cp := q.DeepCopy()
	cp.Status.Used = next
	return cp, nil
}

// count is what the objects of gr in q's namespace that q counts use of
// its spec.hard, from the watch cache once it reflects q's revision (from
// etcd for an uncached resource).
func (g *quotaGate) count(ctx context.Context, gr schema.GroupResource, q *corev1.ResourceQuota) (corev1.ResourceList, error) {
	ns, hard, after := q.Namespace, q.Spec.Hard, quotaRV(q)
	var res *resource
	for gvr, r := range g.s.resources {
		if gvr.GroupResource() == gr {
			res = r
			break
		}
	}
	if res == nil {
		return admission.Usage(gr, nil, hard), nil // not served: nothing exists
	}
	sr := res
	if res.storage != nil {
		sr = res.storage
	}
	var objs []runtime.Object
	if c := g.s.cacher(res); c != nil {
		entries, _, err := c.List(ctx, after, storage.Filter{Namespace: ns})
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		for _, e := range entries {
			objs = append(objs, e.Object())
		}
	} else {
		l, err := g.s.store.List(ctx, sr.prefix(ns), "", 0, 0)
		if err != nil {
			return nil, storageError(err, gr, "")
		}
		for _, kv := range l.KVs {
			o, err := decodeStored(sr, kv.Value, kv.ModRev)
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			objs = append(objs, o)
		}
	}
	return admission.Usage(gr, admission.Matching(q, gr, objs), hard), nil
}

// webhooks feeds the webhook configurations from their watch caches.
type webhooks struct {
	s      *Server
	client admission.Client
}

func (w *webhooks) attributes(req *AdmissionRequest) *admission.Attributes {
	res := w.s.resources[req.Resource]
	a := &admission.Attributes{
		Operation: admissionv1.Operation(req.Operation), Resource: req.Resource, Subresource: req.Subresource,
		Namespace: req.Namespace, Name: req.Name, Object: req.Object, OldObject: req.OldObject, DryRun: req.DryRun,
		User: authenticationv1.UserInfo{Username: req.User.Name, UID: req.User.UID, Groups: req.User.Groups, Extra: userExtra(req.User.Extra)},
	}
	if res != nil {
		a.Kind, a.Namespaced = res.gvk(), res.namespaced
	}
	ns := req.Namespace
	if req.Resource.Resource == "namespaces" && req.Resource.Group == "" {
		ns = req.Name
	}
	if ns != "" {
		if e, ok := w.s.cachers["namespaces"].Get("/registry/namespaces/" + ns); ok {
			a.NamespaceLabels = objectMeta(e.Object()).Labels
		} else if nsObj, ok := req.Object.(*corev1.Namespace); ok {
			a.NamespaceLabels = nsObj.Labels
		}
	}
	return a
}

func userExtra(extra map[string][]string) map[string]authenticationv1.ExtraValue {
	if len(extra) == 0 {
		return nil
	}
	out := make(map[string]authenticationv1.ExtraValue, len(extra))
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// skipWebhooks: writes to the webhook configurations themselves are never
// sent to webhooks, as upstream, so a broken webhook can always be removed.
func skipWebhooks(req *AdmissionRequest) bool {
	return req.Resource.Group == admissionregistrationv1.GroupName && strings.HasSuffix(req.Resource.Resource, "webhookconfigurations")
}

type mutatingWebhooks struct{ *webhooks }

func (m mutatingWebhooks) Admit(ctx context.Context, req *AdmissionRequest) error {
	if skipWebhooks(req) {
		return nil
	}
	objs := m.s.cachedIn("mutatingwebhookconfigurations", "")
	if len(objs) == 0 {
		return nil
	}
	cfgs := make([]*admissionregistrationv1.MutatingWebhookConfiguration, len(objs))
	for i, o := range objs {
		cfgs[i] = o.(*admissionregistrationv1.MutatingWebhookConfiguration)
	}
	res := m.s.resources[req.Resource]
	a := m.attributes(req)
	decode := func(b []byte) (runtime.Object, error) {
		obj := res.newObj()
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(b, obj); err != nil {
			return nil, err
		}
		return obj, checkKind(obj, res.gvk())
	}
	if err := m.client.Mutate(ctx, cfgs, a, decode); err != nil {
		return err
	}
	if a.Object != req.Object {
		// The caller holds req.Object: patch it in place.
		reflect.ValueOf(req.Object).Elem().Set(reflect.ValueOf(a.Object).Elem())
	}
	return nil
}

type validatingWebhooks struct{ *webhooks }

func (v validatingWebhooks) Validate(ctx context.Context, req *AdmissionRequest) error {
	if skipWebhooks(req) {
		return nil
	}
	objs := v.s.cachedIn("validatingwebhookconfigurations", "")
	if len(objs) == 0 {
		return nil
	}
	cfgs := make([]*admissionregistrationv1.ValidatingWebhookConfiguration, len(objs))
	for i, o := range objs {
		cfgs[i] = o.(*admissionregistrationv1.ValidatingWebhookConfiguration)
	}
	return v.client.Validate(ctx, cfgs, v.attributes(req))
}
