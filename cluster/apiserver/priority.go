package apiserver

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/kstep-dev/kstep/cluster/apiserver/admission"
	"github.com/kstep-dev/kstep/cluster/apiserver/defaults"
	"github.com/kstep-dev/kstep/cluster/apiserver/validation"
	"github.com/kstep-dev/kstep/cluster/storage"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Pod priority: upstream's Priority admission plugin, fed from the
// PriorityClass watch cache (no etcd read per pod create), and the system
// classes every cluster has, created at start as the bootstrap policy is.

var priorityClassesGVR = schedulingv1.SchemeGroupVersion.WithResource("priorityclasses")

// priorityReadyWait is how long a write waits for the PriorityClass cache
// to be primed before it is refused, as upstream's admission handlers wait
// for their informers.
const priorityReadyWait = 10 * time.Second

// priorityPlugin is upstream's Priority: mutating on pod creates and
// updates, validating on PriorityClass creates and updates; it also
// refuses the deletion of a system class (upstream's registry does).
type priorityPlugin struct {
	s *Server
	// snap is the classes as the cache held them at one revision; it is
	// rebuilt when the cache moves, so a pod create reads a map.
	snap atomic.Pointer[priorityClassSnapshot]
}

// priorityClassSnapshot implements admission.PriorityClasses.
type priorityClassSnapshot struct {
	rv      int64
	byName  map[string]*schedulingv1.PriorityClass
	dflt    *schedulingv1.PriorityClass
	classes []*schedulingv1.PriorityClass
}

func (p *priorityClassSnapshot) Get(name string) (*schedulingv1.PriorityClass, bool) {
	pc, ok := p.byName[name]
	return pc, ok
}

func (p *priorityClassSnapshot) GlobalDefault() *schedulingv1.PriorityClass { return p.dflt }

func (p *priorityPlugin) cacher() *storage.Cacher { return p.s.cachers[priorityClassesGVR.Resource] }

// classes returns the cached classes, waiting (bounded) for the cache to
// be primed. The caller must not change them.
func (p *priorityPlugin) classes(ctx context.Context) (*priorityClassSnapshot, error) {
	c := p.cacher()
	select {
	case <-c.Ready():
	default:
		wctx, cancel := context.WithTimeout(ctx, priorityReadyWait)
		defer cancel()
		select {
		case <-c.Ready():
		case <-wctx.Done():
			return nil, errors.New("not yet ready to handle request")
		}
	}
	if snap := p.snap.Load(); snap != nil && snap.rv == c.RV() {
		return snap, nil
	}
	entries, rv, err := c.List(ctx, 0, storage.Filter{})
	if err != nil {
		return nil, err
	}
	snap := &priorityClassSnapshot{rv: rv, byName: make(map[string]*schedulingv1.PriorityClass, len(entries))}
	for _, e := range entries {
		pc := e.Object().(*schedulingv1.PriorityClass)
		snap.byName[pc.Name] = pc
		snap.classes = append(snap.classes, pc)
	}
	snap.dflt = admission.PickGlobalDefault(snap.classes)
	p.snap.Store(snap)
	return snap, nil
}

// catchUp waits until the cache holds everything etcd has now: a class
// named by a pod but absent from the cache may have been created a moment
// ago. Only such misses, and writes of a global default class, read etcd
// (its revision).
func (p *priorityPlugin) catchUp(ctx context.Context) error {
	rev, err := p.s.store.Revision(ctx)
	if err != nil {
		return err
	}
	return p.cacher().WaitFor(ctx, rev)
}

func (p *priorityPlugin) Admit(ctx context.Context, req *AdmissionRequest) error {
	if req.Subresource != "" || req.Resource.Group != "" || req.Resource.Resource != "pods" {
		return nil
	}
	pod, ok := req.Object.(*corev1.Pod)
	if !ok {
		return nil
	}
	switch req.Operation {
	case Update:
		if old, ok := req.OldObject.(*corev1.Pod); ok {
			admission.KeepPodPriority(pod, old)
		}
		return nil
	case Create:
	default:
		return nil
	}
	snap, err := p.classes(ctx)
	if err != nil {
		return apierrors.NewForbidden(req.Resource.GroupResource(), req.Name, err)
	}
	if name := pod.Spec.PriorityClassName; name != "" {
		if _, ok := snap.Get(name); !ok {
			if err := p.catchUp(ctx); err != nil {
				return apierrors.NewInternalError(err)
			}
			if snap, err = p.classes(ctx); err != nil {
				return apierrors.NewForbidden(req.Resource.GroupResource(), req.Name, err)
			}
		}
	}
	if err := admission.ResolvePodPriority(pod, snap); err != nil {
		return apierrors.NewForbidden(req.Resource.GroupResource(), req.Name, err)
	}
	return nil
}

func (p *priorityPlugin) Validate(ctx context.Context, req *AdmissionRequest) error {
	if req.Subresource != "" || req.Resource.GroupResource() != priorityClassesGVR.GroupResource() {
		return nil
	}
	if req.Operation == Delete {
		if validation.IsSystemPriorityClass(req.Name) {
			return apierrors.NewForbidden(req.Resource.GroupResource(), req.Name, errors.New("this is a system priority class and cannot be deleted"))
		}
		return nil
	}
	pc, ok := req.Object.(*schedulingv1.PriorityClass)
	if !ok || !pc.GlobalDefault {
		return nil
	}
	// A default written a moment ago must be seen: such writes are rare,
	// so they may read etcd's revision.
	if err := p.catchUp(ctx); err != nil {
		return apierrors.NewInternalError(err)
	}
	snap, err := p.classes(ctx)
	if err != nil {
		return apierrors.NewForbidden(req.Resource.GroupResource(), req.Name, err)
	}
	if err := admission.CheckGlobalDefault(pc, snap.GlobalDefault(), req.Operation == Update); err != nil {
		return apierrors.NewForbidden(req.Resource.GroupResource(), req.Name, err)
	}
	return nil
}

// bootstrapPriorityClasses creates the system PriorityClasses where absent
// and waits until the cache holds them, so that a ready apiserver admits
// pods naming them. Racing apiservers are fine: creation is a transaction
// on absence, and an existing class is left as it is.
func (s *Server) bootstrapPriorityClasses(ctx context.Context) {
	res := s.resources[priorityClassesGVR]
	for _, pc := range validation.SystemPriorityClasses() {
		for ctx.Err() == nil {
			obj := pc.DeepCopy()
			prepareForCreate(res, obj, metav1.NewTime(s.now()))
			defaults.Apply(obj)
			val, err := encodeStored(res, obj)
			var rev int64
			if err == nil {
				rev, err = s.store.Create(ctx, res.key("", obj.Name), val)
			}
			if errors.Is(err, storage.ErrExists) {
				break
			}
			if err == nil {
				if err = s.cacher(res).WaitFor(ctx, rev); err == nil {
					break
				}
			}
			s.log.Warn("creating system PriorityClass", "name", obj.Name, "err", err)
			sleep(ctx, 200*time.Millisecond)
		}
	}
}
