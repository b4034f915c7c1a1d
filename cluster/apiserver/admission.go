package apiserver

import (
	"context"
	"fmt"
	"reflect"
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

// quotaGate enforces ResourceQuota on pod creates. Usage is computed from
// the pod watch cache, and a namespace's creates are serialized from the
// check to etcd's answer, each waiting until the cache holds the previous
// one: two creates cannot both pass at the limit. This holds within one
// apiserver; two apiservers may each admit one pod at the limit at the
// same moment (upstream closes that with a compare-and-swap on the quota's
// status, which kstep's quota controller recomputes instead).
type quotaGate struct {
	s          *Server
	mu         sync.Mutex
	namespaces map[string]*quotaNamespace
}

type quotaNamespace struct {
	mu sync.Mutex
	// lastRev is the revision of this apiserver's latest pod create here.
	lastRev int64
}

// admit checks a new pod against its namespace's quotas and returns the
// function to call with etcd's revision (0 on failure) once the create is
// done. Namespaces without a quota are not serialized.
func (g *quotaGate) admit(ctx context.Context, res *resource, obj runtime.Object) (func(rev int64), error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || res.gvr.Group != "" || res.gvr.Resource != "pods" {
		return func(int64) {}, nil
	}
	quotas := g.s.cachedIn("resourcequotas", pod.Namespace)
	if len(quotas) == 0 {
		return func(int64) {}, nil
	}
	g.mu.Lock()
	st := g.namespaces[pod.Namespace]
	if st == nil {
		st = &quotaNamespace{}
		g.namespaces[pod.Namespace] = st
	}
	g.mu.Unlock()
	st.mu.Lock()
	release := func(rev int64) {
		if rev > st.lastRev {
			st.lastRev = rev
		}
		st.mu.Unlock()
	}
	if err := g.check(ctx, st.lastRev, pod, quotas); err != nil {
		release(0)
		return nil, err
	}
	return release, nil
}

func (g *quotaGate) check(ctx context.Context, after int64, pod *corev1.Pod, quotas []runtime.Object) error {
	pc := g.s.cachers["pods"]
	if err := pc.WaitFor(ctx, after); err != nil {
		return apierrors.NewInternalError(err)
	}
	entries, _, err := pc.List(ctx, 0, storage.Filter{Namespace: pod.Namespace})
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	pods := make([]*corev1.Pod, len(entries))
	for i, e := range entries {
		pods[i] = e.Object().(*corev1.Pod)
	}
	for _, o := range quotas {
		q := o.(*corev1.ResourceQuota)
		used := admission.Usage(pods, q.Spec.Hard)
		if err := admission.CheckQuota(q.Name, q.Spec.Hard, used, pod); err != nil {
			return apierrors.NewForbidden(corev1.Resource("pods"), pod.Name, err)
		}
	}
	return nil
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
