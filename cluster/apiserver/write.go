package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/kstep-dev/kstep/cluster/apiserver/defaults"
	"github.com/kstep-dev/kstep/cluster/apiserver/validation"
	"github.com/kstep-dev/kstep/cluster/storage"
	"github.com/kstep-dev/kstep/cluster/trace"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
)

// defaulting is the mutating admission that applies upstream's v1 defaults.
type defaulting struct{}

func (defaulting) Admit(_ context.Context, req *AdmissionRequest) error {
	if req.Operation != Delete {
		defaults.Apply(req.Object)
	}
	return nil
}

// toStorage converts a request object to its storage version.
func (q *request) toStorage(obj runtime.Object) runtime.Object {
	if q.res.convert != nil {
		return q.res.convert.toStorage(obj)
	}
	return obj
}

// admit runs mutating admission, validation and validating admission: the
// part of the chain between the decoded request and storage.
// sub is the subresource whose rules apply: "" for the main resource (and
// for scale, which writes the owner's spec), "status", "binding".
func (q *request) admit(op Operation, sub string, obj, old runtime.Object) error {
	m := objectMeta(obj)
	req := &AdmissionRequest{Operation: op, Resource: q.res.gvr, Subresource: sub,
		Namespace: m.Namespace, Name: m.Name, User: q.user, Object: obj, OldObject: old, DryRun: q.dry()}
	for _, a := range q.s.chain.Mutating {
		if err := a.Admit(q.ctx(), req); err != nil {
			return err
		}
	}
	var errs field.ErrorList
	switch {
	case op == Delete:
		// A stored object is deletable whatever today's rules say of it.
	case op == Create:
		errs = validation.ValidateCreate(obj)
	case sub == "binding":
		// The Binding was validated; setting nodeName is its whole point.
	case sub == "status":
		errs = validation.ValidateStatusUpdate(obj, old)
	default:
		errs = validation.ValidateUpdate(obj, old)
	}
	if len(errs) > 0 {
		return newInvalid(q.res.gvk().GroupKind(), m.Name, errs)
	}
	for _, v := range q.s.chain.Validating {
		if err := v.Validate(q.ctx(), req); err != nil {
			return err
		}
	}
	return nil
}

func (q *request) create() error {
	switch q.ri.Subresource {
	case "binding":
		return q.bind()
	case "eviction":
		return q.evict()
	case "":
	default:
		return apierrors.NewMethodNotSupported(q.gr(), "create "+q.ri.Subresource)
	}
	if q.ri.Name != "" {
		return apierrors.NewMethodNotSupported(q.gr(), "create with a name in the URL")
	}
	if err := q.checkFieldManagerParams(writeCreate); err != nil {
		return err
	}
	obj, err := q.decodeObject()
	if err != nil {
		return err
	}
	return q.createObject(obj, true)
}

// createObject stores a new object: system fields, managed fields (track:
// the request's manager owns what it sent; an apply computed its own),
// admission, quota, etcd.
func (q *request) createObject(obj runtime.Object, track bool) error {
	m := objectMeta(obj)
	if m.Name == "" && m.GenerateName == "" {
		return newInvalid(q.res.gvk().GroupKind(), "", field.ErrorList{field.Required(field.NewPath("metadata", "name"), "name or generateName is required")})
	}
	prepareForCreate(q.res, obj, metav1.NewTime(q.s.now()))
	if track {
		obj = q.trackUpdate(q.res, nil, obj, "")
		m = objectMeta(obj)
	}
	if err := q.admit(Create, "", obj, nil); err != nil {
		return err
	}
	if q.res.namespaced {
		if err := q.s.namespaceWritable(q.ctx(), m.Namespace); err != nil {
			return err
		}
	}
	// ResourceQuota is the last validating step: the quotas are charged
	// before the write (a dry run's are only checked).
	if err := q.s.quota.admit(q.ctx(), q.res, obj, q.dry()); err != nil {
		return err
	}
	if q.dry() {
		q.s.writeObject(q.w, q.r, http.StatusCreated, q.res, obj)
		return nil
	}
	sr := q.storageResource()
	key := sr.key(m.Namespace, m.Name)
	encode := func() ([]byte, error) { return encodeStored(sr, q.toStorage(obj)) }
	var rev int64
	var err error
	if svc, ok := obj.(*corev1.Service); ok && needsClusterIP(svc) {
		rev, err = q.s.createService(q.ctx(), key, svc, encode)
	} else if val, eerr := encode(); eerr != nil {
		err = apierrors.NewInternalError(eerr)
	} else {
		rev, err = q.s.store.Create(q.ctx(), key, val)
	}
	q.traceCreate(m, err == nil)
	if err != nil {
		return storageError(err, q.gr(), m.Name)
	}
	m.ResourceVersion = itoa(rev)
	q.res.setTypeMeta(obj)
	q.s.writeObject(q.w, q.r, http.StatusCreated, q.res, obj)
	return nil
}

// errConflictRV is a client's resourceVersion precondition that failed.
func (q *request) errConflictRV(name string) error {
	return apierrors.NewConflict(q.gr(), name, errors.New("the object has been modified; please apply your changes to the latest version and try again"))
}

// mutate is the read-modify-write cycle every update, patch and
// subresource write goes through. fn receives the current object (the
// caller's to change) and returns the object to store. A conflict with a
// concurrent writer is retried with the fresh object unless the client
// pinned a resourceVersion, in which case it is the client's 409.
func (q *request) mutate(name, sub string, fn func(cur runtime.Object) (runtime.Object, error)) (runtime.Object, error) {
	sr := q.storageResource()
	key := sr.key(q.ri.Namespace, name)
	var cur runtime.Object
	var curRev int64
	// The watch cache usually holds the current version; the transaction
	// below verifies it, so a stale hint only costs one retry. A write
	// refused on the hint (a JSON patch's test, a precondition, admission)
	// is judged again on etcd's copy before the client hears it, as
	// upstream's GuaranteedUpdate does: the hint may be older than a write
	// the client has already seen acknowledged.
	hinted := false
	if c := q.s.cacher(sr); c != nil {
		if e, ok := c.Get(key); ok {
			cur, curRev, hinted = e.ObjectCopy(), e.RV, true
		}
	}
	for attempt := 0; ; attempt++ {
		// A patch is applied on every attempt: once the client has gone,
		// none is worth making.
		if err := q.ctx().Err(); err != nil {
			return nil, err
		}
		if cur == nil {
			kv, err := q.s.store.Get(q.ctx(), key)
			if err != nil {
				return nil, storageError(err, q.gr(), name)
			}
			if cur, err = decodeStored(sr, kv.Value, kv.ModRev); err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			curRev = kv.ModRev
			hinted = false
		}
		old := cur.DeepCopyObject()
		obj, err := fn(q.fromStorage(cur))
		if err == nil {
			obj = q.toStorage(obj)
			if uid := objectMeta(obj).UID; uid != "" && uid != objectMeta(old).UID {
				err = apierrors.NewConflict(q.gr(), name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, objectMeta(old).UID))
			}
		}
		if err == nil {
			prepareForUpdate(sr, obj, old, sub)
			if !q.applying {
				// What this write changed is its manager's (an apply's
				// fields were computed by the apply).
				obj = q.trackUpdate(sr, old, obj, q.ri.Subresource)
			}
			err = q.admit(Update, sub, q.fromStorage(obj), q.fromStorage(old))
		}
		if err != nil {
			if hinted {
				cur = nil // the cache may be behind: judge etcd's copy
				continue
			}
			return nil, err
		}
		m := objectMeta(obj)
		if m.DeletionTimestamp != nil && len(m.Finalizers) == 0 && !gracefulPending(obj) {
			if ns, ok := obj.(*corev1.Namespace); !ok || namespaceFinalized(ns) {
				// The last finalizer is gone: the object goes now.
				return q.deleteNow(key, obj, curRev)
			}
		}
		if semanticallyEqual(obj, old) && managedFieldsEqual(objectMeta(obj).ManagedFields, objectMeta(old).ManagedFields) {
			return q.fromStorage(old), nil
		}
		if q.dry() {
			return q.fromStorage(obj), nil
		}
		encode := func() ([]byte, error) { return encodeStored(sr, obj) }
		var rev int64
		var now storage.KV
		if svc, ok := obj.(*corev1.Service); ok {
			// A Service's cluster IP is taken or given up in its update's
			// own transaction.
			rev, now, err = q.s.updateService(q.ctx(), key, svc, old.(*corev1.Service), curRev, encode)
		} else if val, eerr := encode(); eerr != nil {
			return nil, apierrors.NewInternalError(eerr)
		} else {
			rev, now, err = q.s.store.Update(q.ctx(), key, val, curRev)
		}
		if err == nil {
			m.ResourceVersion = itoa(rev)
			sr.setTypeMeta(obj)
			return q.fromStorage(obj), nil
		}
		if !errors.Is(err, storage.ErrConflict) || attempt > 50 {
			return nil, storageError(err, q.gr(), name)
		}
		if cur, err = decodeStored(sr, now.Value, now.ModRev); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		curRev, hinted = now.ModRev, false
	}
}

// checkRV enforces a client's resourceVersion precondition against cur.
func (q *request) checkRV(want string, cur runtime.Object, name string) error {
	if want == "" {
		return nil
	}
	have := objectMeta(cur).ResourceVersion
	if want == have {
		return nil
	}
	if _, err := parseRV(want); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q", want))
	}
	// When cur is a watch-cache hint behind the client, mutate judges
	// etcd's copy before the client hears of a conflict.
	return q.errConflictRV(name)
}

func (q *request) update() error {
	var body runtime.Object
	var err error
	if q.ri.Subresource == "scale" {
		return q.updateScale()
	}
	if err := q.checkFieldManagerParams(writeUpdate); err != nil {
		return err
	}
	if body, err = q.decodeObject(); err != nil {
		return err
	}
	want := objectMeta(body).ResourceVersion
	obj, err := q.mutate(q.ri.Name, q.ri.Subresource, func(cur runtime.Object) (runtime.Object, error) {
		if err := q.checkRV(want, cur, q.ri.Name); err != nil {
			return nil, err
		}
		// prepareForUpdate keeps what this subresource may not change.
		return body.DeepCopyObject(), nil
	})
	if err != nil {
		return err
	}
	q.s.writeObject(q.w, q.r, http.StatusOK, q.res, obj)
	return nil
}

// gracefulPending: a bound pod whose graceful deletion the kubelet has not
// finished; it stays until the kubelet deletes it with grace 0.
func gracefulPending(obj runtime.Object) bool {
	m := objectMeta(obj)
	return m.DeletionGracePeriodSeconds != nil && *m.DeletionGracePeriodSeconds > 0
}

func (q *request) deleteNow(key string, obj runtime.Object, rev int64) (runtime.Object, error) {
	m := objectMeta(obj)
	if q.dry() {
		return q.fromStorage(obj), nil
	}
	// A Service's cluster IP goes with it, in the same transaction.
	drev, _, err := q.s.store.Delete(q.ctx(), key, rev, serviceIPKeys(obj)...)
	if err != nil {
		return nil, storageError(err, q.gr(), m.Name)
	}
	m.ResourceVersion = itoa(drev)
	return q.fromStorage(obj), nil
}

// bind is pods/binding: the scheduler's write of spec.nodeName.
func (q *request) bind() error {
	data, mt, err := q.body()
	if err != nil {
		return err
	}
	b := &corev1.Binding{}
	if err := q.decodeBody(data, mt, b, bindingGVK); err != nil {
		return err
	}
	if err := q.checkNames(&b.ObjectMeta); err != nil {
		return err
	}
	if errs := validation.ValidateCreate(b); len(errs) > 0 {
		return newInvalid(bindingGVK.GroupKind(), b.Name, errs)
	}
	now := metav1.NewTime(q.s.now())
	obj, err := q.mutate(q.ri.Name, "binding", func(cur runtime.Object) (runtime.Object, error) {
		pod := cur.(*corev1.Pod)
		if b.UID != "" && b.UID != pod.UID {
			return nil, apierrors.NewConflict(q.gr(), pod.Name, fmt.Errorf("precondition failed: UID in precondition: %v, UID in object meta: %v", b.UID, pod.UID))
		}
		if err := q.checkRV(b.ResourceVersion, cur, pod.Name); err != nil {
			return nil, err
		}
		if pod.DeletionTimestamp != nil {
			return nil, apierrors.NewConflict(q.gr(), pod.Name, errors.New("pod is being deleted, cannot be assigned to a host"))
		}
		if pod.Spec.NodeName != "" {
			return nil, apierrors.NewConflict(q.gr(), pod.Name, fmt.Errorf("pod %s is already assigned to node %q", pod.Name, pod.Spec.NodeName))
		}
		if len(pod.Spec.SchedulingGates) > 0 {
			return nil, apierrors.NewConflict(q.gr(), pod.Name, fmt.Errorf("pod %s has non-empty .spec.schedulingGates", pod.Name))
		}
		pod.Spec.NodeName = b.Target.Name
		setPodCondition(&pod.Status, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now})
		return pod, nil
	})
	if err != nil {
		return err
	}
	// ⑤ ends here, when etcd acknowledged the binding: after the
	// scheduler's pod.scheduled (it sent this request), before the reply.
	if pod, ok := obj.(*corev1.Pod); ok && q.s.tracer != nil {
		q.s.tracer.Emit(trace.PodBound, "Pod", pod.Namespace, pod.Name, pod.UID)
	}
	q.s.writeObject(q.w, q.r, http.StatusCreated, q.res, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: http.StatusCreated})
	return nil
}

func setPodCondition(st *corev1.PodStatus, c corev1.PodCondition) {
	for i := range st.Conditions {
		if st.Conditions[i].Type == c.Type {
			if st.Conditions[i].Status == c.Status {
				return
			}
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}

// deleteOptions reads DeleteOptions from the body or the query.
func (q *request) deleteOptions() (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	if q.r.ContentLength != 0 && q.r.Body != nil && q.r.Body != http.NoBody {
		data, mt, err := q.body()
		if err != nil {
			return nil, err
		}
		// DeleteOptions arrive as v1 or meta.k8s.io/v1; both are the same type.
		switch {
		case len(data) == 0:
		case mt == protobufType:
			if _, _, err := protobufCodec.Decode(data, nil, opts); err != nil {
				return nil, badRequest("the DeleteOptions provided are malformed: %v", err)
			}
		default:
			if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, opts); err != nil {
				return nil, badRequest("the DeleteOptions provided are malformed: %v", err)
			}
		}
	}
	// The body's dryRun counts when the query has none (kubectl's
	// --dry-run=server sends it in the body).
	if err := validDryRun("DeleteOptions", opts.DryRun); err != nil {
		return nil, err
	}
	if len(q.dryRun) == 0 {
		q.dryRun = opts.DryRun
	}
	opts.DryRun = q.dryRun
	query := q.r.URL.Query()
	if s := query.Get("gracePeriodSeconds"); s != "" {
		n, err := parseRV(s)
		if err != nil {
			return nil, badRequest("invalid gracePeriodSeconds %q", s)
		}
		opts.GracePeriodSeconds = &n
	}
	if s := query.Get("propagationPolicy"); s != "" {
		p := metav1.DeletionPropagation(s)
		opts.PropagationPolicy = &p
	}
	if opts.PropagationPolicy != nil {
		switch *opts.PropagationPolicy {
		case metav1.DeletePropagationBackground, metav1.DeletePropagationForeground, metav1.DeletePropagationOrphan:
		default:
			return nil, newInvalid(metav1.SchemeGroupVersion.WithKind("DeleteOptions").GroupKind(), "",
				field.ErrorList{field.NotSupported(field.NewPath("propagationPolicy"), *opts.PropagationPolicy, []string{"Foreground", "Background", "Orphan"})})
		}
	}
	if opts.OrphanDependents != nil && opts.PropagationPolicy == nil {
		p := metav1.DeletePropagationBackground
		if *opts.OrphanDependents {
			p = metav1.DeletePropagationOrphan
		}
		opts.PropagationPolicy = &p
	}
	return opts, nil
}

func (q *request) delete() error {
	opts, err := q.deleteOptions()
	if err != nil {
		return err
	}
	obj, pending, err := q.deleteOne(q.ri.Name, opts)
	if err != nil {
		return err
	}
	code := http.StatusOK
	if pending {
		code = http.StatusAccepted
	}
	q.s.writeObject(q.w, q.r, code, q.res, obj)
	return nil
}

// deleteOne deletes one object: at once, or by marking it (deletionTimestamp)
// when finalizers, a propagation policy or a bound pod's grace period say
// someone else finishes the deletion. pending reports the latter.
func (q *request) deleteOne(name string, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	sr := q.storageResource()
	key := sr.key(q.ri.Namespace, name)
	now := q.s.now()
	for attempt := 0; attempt < 50; attempt++ {
		kv, err := q.s.store.Get(q.ctx(), key)
		if err != nil {
			return nil, false, storageError(err, q.gr(), name)
		}
		cur, err := decodeStored(sr, kv.Value, kv.ModRev)
		if err != nil {
			return nil, false, apierrors.NewInternalError(err)
		}
		m := objectMeta(cur)
		if pc := opts.Preconditions; pc != nil {
			if pc.UID != nil && *pc.UID != m.UID {
				return nil, false, apierrors.NewConflict(q.gr(), name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *pc.UID, m.UID))
			}
			if pc.ResourceVersion != nil && *pc.ResourceVersion != m.ResourceVersion {
				return nil, false, apierrors.NewConflict(q.gr(), name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *pc.ResourceVersion, m.ResourceVersion))
			}
		}
		if err := q.admit(Delete, "", q.fromStorage(cur), q.fromStorage(cur)); err != nil {
			return nil, false, err
		}
		marked := cur.DeepCopyObject()
		if !q.markForDeletion(marked, opts, now) {
			obj, err := q.deleteNow(key, cur, kv.ModRev)
			if apierrors.IsConflict(err) {
				continue
			}
			return obj, false, err
		}
		if semanticallyEqual(marked, cur) || q.dry() {
			return q.fromStorage(marked), true, nil
		}
		val, err := encodeStored(sr, marked)
		if err != nil {
			return nil, false, apierrors.NewInternalError(err)
		}
		rev, _, err := q.s.store.Update(q.ctx(), key, val, kv.ModRev)
		if errors.Is(err, storage.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, false, storageError(err, q.gr(), name)
		}
		objectMeta(marked).ResourceVersion = itoa(rev)
		if _, ok := marked.(*corev1.Namespace); ok {
			q.s.namespaceMarked(rev)
		}
		return q.fromStorage(marked), true, nil
	}
	return nil, false, apierrors.NewConflict(q.gr(), name, errors.New("too many concurrent writers, try again"))
}

// markForDeletion sets the deletion fields on obj and reports whether the
// deletion waits for someone (finalizers, garbage collector, kubelet).
func (q *request) markForDeletion(obj runtime.Object, opts *metav1.DeleteOptions, now time.Time) bool {
	m := objectMeta(obj)
	switch {
	case opts.PropagationPolicy != nil && *opts.PropagationPolicy == metav1.DeletePropagationOrphan:
		m.Finalizers = addString(removeString(m.Finalizers, metav1.FinalizerDeleteDependents), metav1.FinalizerOrphanDependents)
	case opts.PropagationPolicy != nil && *opts.PropagationPolicy == metav1.DeletePropagationForeground:
		m.Finalizers = addString(removeString(m.Finalizers, metav1.FinalizerOrphanDependents), metav1.FinalizerDeleteDependents)
	}
	grace := int64(0)
	if pod, ok := obj.(*corev1.Pod); ok && pod.Spec.NodeName != "" && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		grace = 30
		if pod.Spec.TerminationGracePeriodSeconds != nil {
			grace = *pod.Spec.TerminationGracePeriodSeconds
		}
		if opts.GracePeriodSeconds != nil {
			grace = *opts.GracePeriodSeconds
		}
		if m.DeletionGracePeriodSeconds != nil && *m.DeletionGracePeriodSeconds < grace {
			grace = *m.DeletionGracePeriodSeconds // grace only ever shortens
		}
	}
	if ns, ok := obj.(*corev1.Namespace); ok {
		if namespaceFinalized(ns) {
			return false
		}
		// A namespace is emptied before it goes: phase Terminating, and the
		// namespace controller removes the "kubernetes" finalizer once it
		// is empty.
		ns.Status.Phase = corev1.NamespaceTerminating
		if m.DeletionTimestamp == nil {
			t := metav1.NewTime(now)
			m.DeletionTimestamp = &t
			zero := int64(0)
			m.DeletionGracePeriodSeconds = &zero
		}
		return true
	}
	if len(m.Finalizers) == 0 && grace == 0 {
		return false
	}
	if m.DeletionTimestamp == nil || grace > 0 {
		t := metav1.NewTime(now.Add(time.Duration(grace) * time.Second))
		if m.DeletionTimestamp == nil || t.Before(m.DeletionTimestamp) {
			m.DeletionTimestamp = &t
		}
	}
	m.DeletionGracePeriodSeconds = &grace
	return true
}

func addString(list []string, s string) []string {
	if contains(list, s) {
		return list
	}
	return append(list, s)
}

func removeString(list []string, s string) []string {
	out := list[:0:0]
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

func (q *request) deleteCollection() error {
	opts, err := q.deleteOptions()
	if err != nil {
		return err
	}
	p, err := parseListParams(q.r.URL.Query(), q.res, q.ri.Namespace)
	if err != nil {
		return err
	}
	sr := q.storageResource()
	res, err := q.s.store.List(q.ctx(), sr.prefix(q.ri.Namespace), "", 0, 0)
	if err != nil {
		return storageError(err, q.gr(), "")
	}
	var deleted []runtime.Object
	for _, kv := range res.KVs {
		obj, err := decodeStored(sr, kv.Value, kv.ModRev)
		if err != nil || !p.filter.Matches(attrsOf(sr, obj)) {
			continue
		}
		m := objectMeta(obj)
		sub := *q.ri
		sub.Namespace = m.Namespace
		one := &request{s: q.s, w: q.w, r: q.r, ri: &sub, res: q.res, user: q.user, dryRun: q.dryRun}
		out, _, err := one.deleteOne(m.Name, opts)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		deleted = append(deleted, out)
	}
	out, _ := negotiate(q.r, q.res.pb != nil)
	if out == outTable {
		out = outJSON
	}
	return q.writeObjects(out, deleted, itoa(res.Rev), "")
}

// toScale renders the scale subresource of a ReplicaSet, Deployment,
// StatefulSet or ReplicationController. status.selector is the label selector in its
// string form; a ReplicationController's selector map renders as upstream's
// does (labels.SelectorFromSet).
func toScale(obj runtime.Object) (runtime.Object, error) {
	var spec, status int32
	selector := ""
	switch o := obj.(type) {
	case *appsv1.ReplicaSet:
		spec, status, selector = derefReplicas(o.Spec.Replicas), o.Status.Replicas, selectorString(o.Spec.Selector)
	case *appsv1.Deployment:
		spec, status, selector = derefReplicas(o.Spec.Replicas), o.Status.Replicas, selectorString(o.Spec.Selector)
	case *appsv1.StatefulSet:
		spec, status, selector = derefReplicas(o.Spec.Replicas), o.Status.Replicas, selectorString(o.Spec.Selector)
	case *corev1.ReplicationController:
		spec, status, selector = derefReplicas(o.Spec.Replicas), o.Status.Replicas, labels.SelectorFromSet(o.Spec.Selector).String()
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%T has no scale subresource", obj))
	}
	return newScale(objectMeta(obj), spec, status, selector), nil
}

// selectorString renders a label selector, or "" when it is invalid.
func selectorString(sel *metav1.LabelSelector) string {
	if s, err := metav1.LabelSelectorAsSelector(sel); err == nil {
		return s.String()
	}
	return ""
}

func derefReplicas(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

// traceCreate stamps step ① for ReplicaSets (received when the request
// arrived, persisted when etcd acknowledged) and ③'s pod.persisted.
func (q *request) traceCreate(m *metav1.ObjectMeta, persisted bool) {
	t := q.s.tracer
	if t == nil {
		return
	}
	switch q.res.kind {
	case "ReplicaSet":
		t.EmitAt(q.start, trace.RSReceived, "ReplicaSet", m.Namespace, m.Name, m.UID)
		if persisted {
			t.Emit(trace.RSPersisted, "ReplicaSet", m.Namespace, m.Name, m.UID)
		}
	case "Pod":
		if persisted && q.res.gvr.Group == "" {
			t.Emit(trace.PodPersisted, "Pod", m.Namespace, m.Name, m.UID)
		}
	}
}
