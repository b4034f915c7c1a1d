package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kstep-dev/kstep/cluster/trace"
)

// The load generator's own steps, client side. They are not actor steps, so
// they live here and not in cluster/trace.
const (
	ClientRSSent  = "client.rs.sent"  // ① the client sent the create
	ClientRSAcked = "client.rs.acked" // ① the client got the 201
)

// The steps the load generator's own watches see from outside the cluster
// (Options.Outside), each the first time its watch delivers it, on the
// harness's clock: what a cluster whose components do not stamp kstep's
// tracer shows. Ready is trace.PodReadyObserved, stamped by the same watch.
const (
	ClientPodAdded        = "client.pod.added"        // the pod watch first delivered the pod
	ClientPodBound        = "client.pod.bound"        // it first showed spec.nodeName set
	ClientPodRunning      = "client.pod.running"      // it first showed phase Running
	ClientEndpointsListed = "client.endpoints.listed" // the Endpoints watch first listed the pod ready
)

// Actor is the actor name of the load generator's trace events.
const Actor = "loadgen"

// Options are how Run reaches the cluster and where it reports.
type Options struct {
	Client kubernetes.Interface
	// TraceFile receives client.rs.sent, client.rs.acked and
	// pod.ready.observed as JSON lines; "" records nothing.
	TraceFile string
	// Progress, when non-nil, gets progress bars.
	Progress io.Writer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Labels go on everything the job creates (namespaces, Services,
	// ReplicaSets or Deployments, and their pods through the template),
	// beside the job's own label: how a run's objects are found again to
	// remove them.
	Labels map[string]string
	// Outside: the watches also stamp the steps seen from outside
	// (ClientPodAdded, ClientPodBound, ClientPodRunning,
	// ClientEndpointsListed).
	Outside bool
	Log     *slog.Logger
}

// ErrDeletePhase wraps a delete phase that failed: the job's objects or
// their pods may still be there.
var ErrDeletePhase = errors.New("delete phase")

// Result is what a run did.
type Result struct {
	Writes   []Write    `json:"-"`
	Pods     []PodOwner `json:"-"`
	Errors   []string   `json:"errors,omitempty"`
	Expected int        `json:"expected_pods"`
	Ready    int        `json:"ready_pods"`
	// CreateStart is when the first create was sent; ReadyAt when the last
	// expected pod was seen Ready and, with Services, listed in its
	// Service's Endpoints (zero if that never happened).
	CreateStart time.Time `json:"create_start"`
	ReadyAt     time.Time `json:"ready_at"`
	// TraceDropped is how many of the loadgen's own trace events were lost.
	TraceDropped uint64 `json:"trace_dropped"`
}

// podState is what the watch knows of one pod.
type podState struct {
	owner                 PodOwner
	bound, running, ready bool
	deleted               bool
}

// watcher is the job's own pod watch.
type watcher struct {
	mu      sync.Mutex
	pods    map[types.UID]*podState
	tracer  *trace.Tracer
	now     func() time.Time
	outside bool
	bound   atomic.Int64
	running atomic.Int64
	ready   atomic.Int64
	live    atomic.Int64
}

func (w *watcher) observe(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	at := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.pods[pod.UID]
	if st == nil {
		st = &podState{owner: PodOwner{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}}
		w.pods[pod.UID] = st
		w.live.Add(1)
		w.stamp(at, ClientPodAdded, pod)
	}
	if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == KindReplicaSet {
		st.owner.RSUID, st.owner.RSName = ref.UID, ref.Name
	}
	if pod.Spec.NodeName != "" && !st.bound {
		st.bound = true
		st.owner.Node = pod.Spec.NodeName
		w.bound.Add(1)
		w.stamp(at, ClientPodBound, pod)
	}
	if pod.Status.Phase == corev1.PodRunning && !st.running {
		st.running = true
		w.running.Add(1)
		w.stamp(at, ClientPodRunning, pod)
	}
	if !st.ready && PodReady(pod) {
		st.ready = true
		w.ready.Add(1)
		w.tracer.EmitAt(at, trace.PodReadyObserved, "Pod", pod.Namespace, pod.Name, pod.UID)
	}
}

// stamp records an outside step of pod, when the job stamps them.
func (w *watcher) stamp(at time.Time, step string, pod *corev1.Pod) {
	if w.outside {
		w.tracer.EmitAt(at, step, "Pod", pod.Namespace, pod.Name, pod.UID)
	}
}

// endpointsWatch counts the pods the job's Services have listed as ready
// addresses: the endpoints controller's step ⑧ is done for a pod once it
// is counted here.
type endpointsWatch struct {
	mu     sync.Mutex
	listed map[types.UID]bool
	n      atomic.Int64
	// tracer, when set, gets ClientEndpointsListed for each pod.
	tracer *trace.Tracer
	now    func() time.Time
}

func (e *endpointsWatch) observe(obj any) {
	ep, ok := obj.(*corev1.Endpoints)
	if !ok {
		return
	}
	var at time.Time
	if e.tracer != nil {
		at = e.now()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range ep.Subsets {
		for _, a := range s.Addresses {
			if r := a.TargetRef; r != nil && r.Kind == "Pod" && !e.listed[r.UID] {
				e.listed[r.UID] = true
				e.n.Add(1)
				if e.tracer != nil {
					e.tracer.EmitAt(at, ClientEndpointsListed, "Pod", r.Namespace, r.Name, r.UID)
				}
			}
		}
	}
}

func (w *watcher) gone(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if st := w.pods[pod.UID]; st != nil && !st.deleted {
		st.deleted = true
		w.live.Add(-1)
	}
}

func (w *watcher) owners() []PodOwner {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]PodOwner, 0, len(w.pods))
	for _, st := range w.pods {
		out = append(out, st.owner)
	}
	return out
}

// PodReady reports whether p's Ready condition is True.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Run runs job against the cluster: namespaces, create, wait Ready, scale,
// delete, as the job's phases say. It returns the result even when a phase
// failed or timed out; the error says which.
func Run(ctx context.Context, job *Job, opts Options) (*Result, error) {
	if err := job.Validate(); err != nil {
		return nil, err
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tr, err := trace.Open(opts.TraceFile, Actor)
	if err != nil {
		return nil, err
	}
	res := &Result{Expected: job.ExpectedPods()}
	wl := &WriteLog{}
	var errMu sync.Mutex
	fail := func(err error) {
		errMu.Lock()
		res.Errors = append(res.Errors, err.Error())
		errMu.Unlock()
	}
	cs := opts.Client

	for _, ns := range job.Namespaces {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: opts.Labels}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			tr.Close()
			return res, fmt.Errorf("namespace %s: %w", ns, err)
		}
	}

	w := &watcher{pods: map[types.UID]*podState{}, tracer: tr, now: now, outside: opts.Outside}
	wctx, stopWatch := context.WithCancel(ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = JobLabel + "=" + job.Name
	}))
	inf := factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    w.observe,
		UpdateFunc: func(_, n any) { w.observe(n) },
		DeleteFunc: w.gone,
	}); err != nil {
		stopWatch()
		tr.Close()
		return res, err
	}
	// With Services, a pod is done when its Service lists it too: the run
	// waits for the endpoints controller as it waits for the kubelets.
	var eps *endpointsWatch
	if job.Object.Service {
		eps = &endpointsWatch{listed: map[types.UID]bool{}}
		if opts.Outside {
			eps.tracer, eps.now = tr, now
		}
		if _, err := factory.Core().V1().Endpoints().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    eps.observe,
			UpdateFunc: func(_, n any) { eps.observe(n) },
		}); err != nil {
			stopWatch()
			tr.Close()
			return res, err
		}
	}
	factory.Start(wctx.Done())
	factory.WaitForCacheSync(wctx.Done())

	var created atomic.Int64
	var prog *progress
	if opts.Progress != nil {
		prog = newProgress(opts.Progress, job.Count, job.ExpectedPods())
	}
	progDone := make(chan struct{})
	go func() {
		defer close(progDone)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			prog.set(int(created.Load()), int(w.bound.Load()), int(w.running.Load()), int(w.ready.Load()))
			select {
			case <-wctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	finish := func(err error) (*Result, error) {
		stopWatch()
		<-progDone
		prog.set(int(created.Load()), int(w.bound.Load()), int(w.running.Load()), int(w.ready.Load()))
		prog.stop()
		factory.Shutdown()
		res.Ready = int(w.ready.Load())
		res.Writes = wl.Writes()
		res.Pods = w.owners()
		res.TraceDropped = tr.Dropped()
		if cerr := tr.Close(); cerr != nil && err == nil {
			err = cerr
		}
		return res, err
	}

	sched := NewSchedule(job.QPS, job.Burst, now())
	// paced runs do(i) for i in [0, n) on job.Workers workers, each start
	// released by the arrival schedule.
	paced := func(ctx context.Context, n int, do func(ctx context.Context, i int) error) error {
		work := make(chan int)
		var wg sync.WaitGroup
		for range job.Workers {
			wg.Go(func() {
				for i := range work {
					if err := do(ctx, i); err != nil {
						fail(err)
					}
				}
			})
		}
		var err error
	send:
		for i := range n {
			at := sched.Next(now())
			if d := at.Sub(now()); d > 0 {
				select {
				case <-ctx.Done():
					err = ctx.Err()
					break send
				case <-time.After(d):
				}
			}
			select {
			case work <- i:
			case <-ctx.Done():
				err = ctx.Err()
				break send
			}
		}
		close(work)
		wg.Wait()
		return err
	}
	nsOf := func(i int) string { return job.Namespaces[i%len(job.Namespaces)] }
	nameOf := func(i int) string { return fmt.Sprintf("%s%d", job.Object.NamePrefix, i) }

	// Phase 1: create. Objects of this job that exist already (an earlier
	// run's, killed mid-way) are not created again: the run resumes.
	existing, err := existingObjects(ctx, cs, job)
	if err != nil {
		return finish(fmt.Errorf("create phase: list the job's objects: %w", err))
	}
	var todo []int
	for i := range job.Count {
		if existing[nsOf(i)+"/"+nameOf(i)] {
			created.Add(1)
			continue
		}
		todo = append(todo, i)
	}
	if n := job.Count - len(todo); n > 0 {
		log.Info("resuming", "existing", n, "to create", len(todo))
	}
	res.CreateStart = now()
	cctx, cancel := context.WithTimeout(ctx, job.Timeouts.Create.Duration)
	err = paced(cctx, len(todo), func(ctx context.Context, k int) error {
		i := todo[k]
		ns, name := nsOf(i), nameOf(i)
		if job.Object.Service {
			sent := now()
			svc, err := createServiceOnce(ctx, cs, job, opts.Labels, ns, name)
			if err != nil {
				return fmt.Errorf("create Service %s/%s: %w", ns, name, err)
			}
			wl.add(Write{Op: "create", Kind: KindService, Namespace: ns, Name: name, UID: svc.UID, ResourceVersion: svc.ResourceVersion, SentNS: sent.UnixNano(), AckNS: now().UnixNano()})
		}
		sent := now()
		uid, rv, kind, err := createOnce(ctx, cs, job, opts.Labels, ns, name)
		ack := now()
		if err != nil {
			return fmt.Errorf("create %s %s/%s: %w", job.Object.Kind, ns, name, err)
		}
		created.Add(1)
		wl.add(Write{Op: "create", Kind: kind, Namespace: ns, Name: name, UID: uid, ResourceVersion: rv, SentNS: sent.UnixNano(), AckNS: ack.UnixNano()})
		// The UID is known only from the answer, so sent is stamped late,
		// at the time taken before the request.
		tr.EmitAt(sent, ClientRSSent, kind, ns, name, uid)
		tr.EmitAt(ack, ClientRSAcked, kind, ns, name, uid)
		return nil
	})
	cancel()
	if err != nil {
		return finish(fmt.Errorf("create phase: %w", err))
	}
	log.Info("created", "objects", created.Load())

	waitReady := func(want int) error {
		rctx, cancel := context.WithTimeout(ctx, job.Timeouts.Ready.Duration)
		defer cancel()
		for int(w.ready.Load()) < want || (eps != nil && int(eps.n.Load()) < want) {
			select {
			case <-rctx.Done():
				if int(w.ready.Load()) < want {
					return fmt.Errorf("%d of %d pods Ready after %v: %w", w.ready.Load(), want, job.Timeouts.Ready.Duration, rctx.Err())
				}
				return fmt.Errorf("%d of %d pods listed in their Service's Endpoints after %v: %w", eps.n.Load(), want, job.Timeouts.Ready.Duration, rctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
		return nil
	}
	// Phase 4: delete. It also runs after a ready or scale phase that
	// failed, so a job that deletes leaves nothing behind either way.
	deletePhase := func() error {
		dctx, cancel := context.WithTimeout(ctx, job.Timeouts.Delete.Duration)
		defer cancel()
		err := paced(dctx, job.Count, func(ctx context.Context, i int) error {
			ns, name := nsOf(i), nameOf(i)
			sent := now()
			bg := metav1.DeletePropagationBackground
			opts := metav1.DeleteOptions{PropagationPolicy: &bg}
			var err error
			if job.Object.Kind == KindDeployment {
				err = cs.AppsV1().Deployments(ns).Delete(ctx, name, opts)
			} else {
				err = cs.AppsV1().ReplicaSets(ns).Delete(ctx, name, opts)
			}
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete %s/%s: %w", ns, name, err)
			}
			wl.add(Write{Op: "delete", Kind: job.Object.Kind, Namespace: ns, Name: name, SentNS: sent.UnixNano(), AckNS: now().UnixNano()})
			if job.Object.Service {
				sent := now()
				if err := cs.CoreV1().Services(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					return fmt.Errorf("delete Service %s/%s: %w", ns, name, err)
				}
				wl.add(Write{Op: "delete", Kind: KindService, Namespace: ns, Name: name, SentNS: sent.UnixNano(), AckNS: now().UnixNano()})
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("%w: %w", ErrDeletePhase, err)
		}
		for w.live.Load() > 0 {
			select {
			case <-dctx.Done():
				return fmt.Errorf("%w: %d pods left: %w", ErrDeletePhase, w.live.Load(), dctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
		return nil
	}
	// failed ends the job after a phase failed: with its objects deleted
	// first when the job deletes them.
	failed := func(err error) (*Result, error) {
		if job.Phases.Delete {
			if derr := deletePhase(); derr != nil {
				err = errors.Join(err, derr)
			}
		}
		return finish(err)
	}
	// A create that failed for good (client-go retries what the
	// apiserver says to retry) leaves pods that never come: waiting for
	// them would only wait out the ready timeout, and the run would be
	// invalid for a reason that is not the one.
	errMu.Lock()
	nerr := len(res.Errors)
	first := ""
	if nerr > 0 {
		first = res.Errors[0]
	}
	errMu.Unlock()
	if nerr > 0 {
		return failed(fmt.Errorf("create phase: %d of %d creates failed, first: %s", nerr, len(todo), first))
	}
	// Phase 2: wait Ready.
	if err := waitReady(job.ExpectedPods()); err != nil {
		return failed(fmt.Errorf("ready phase: %w", err))
	}
	res.ReadyAt = now()

	// Phase 3: scale.
	if to := job.Phases.ScaleTo; to > 0 {
		want := job.Count * int(to)
		prog.retarget(want)
		sctx, cancel := context.WithTimeout(ctx, job.Timeouts.Create.Duration)
		err := paced(sctx, job.Count, func(ctx context.Context, i int) error {
			ns, name := nsOf(i), nameOf(i)
			sent := now()
			obj, err := scale(ctx, cs, job.Object.Kind, ns, name, to)
			if err != nil {
				return fmt.Errorf("scale %s/%s: %w", ns, name, err)
			}
			wl.add(Write{Op: "scale", Kind: job.Object.Kind, Namespace: ns, Name: name, UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion(), SentNS: sent.UnixNano(), AckNS: now().UnixNano()})
			return nil
		})
		cancel()
		if err != nil {
			return failed(fmt.Errorf("scale phase: %w", err))
		}
		if to > job.Object.Replicas {
			if err := waitReady(want); err != nil {
				return failed(fmt.Errorf("scale phase: %w", err))
			}
		}
	}

	if job.Phases.Delete {
		if err := deletePhase(); err != nil {
			return finish(err)
		}
	}
	if len(res.Errors) > 0 {
		return finish(fmt.Errorf("%d writes failed, first: %s", len(res.Errors), res.Errors[0]))
	}
	return finish(nil)
}

// template is the pod template of every copy.
func template(job *Job, labels map[string]string) corev1.PodTemplateSpec {
	c := corev1.Container{Name: "app", Image: job.Object.Image}
	if job.Object.ReadinessProbe {
		// kstep-app answers /readyz once its START_DELAY has passed.
		c.Ports = []corev1.ContainerPort{{ContainerPort: 8080}}
		c.ReadinessProbe = &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{
			HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8080)}}}
	}
	if job.Object.CPU != "" {
		c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(job.Object.CPU)}
	}
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
}

// service selects the pods of object name.
func service(job *Job, extra map[string]string, ns, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: withLabels(extra, map[string]string{JobLabel: job.Name})},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{JobLabel: job.Name, "app": name},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
}

// existingObjects are the job's objects already there (namespace/name),
// by its label.
func existingObjects(ctx context.Context, cs kubernetes.Interface, job *Job) (map[string]bool, error) {
	out := map[string]bool{}
	sel := metav1.ListOptions{LabelSelector: JobLabel + "=" + job.Name}
	for _, ns := range job.Namespaces {
		var names []string
		if job.Object.Kind == KindDeployment {
			l, err := cs.AppsV1().Deployments(ns).List(ctx, sel)
			if err != nil {
				return nil, err
			}
			for _, d := range l.Items {
				names = append(names, d.Name)
			}
		} else {
			l, err := cs.AppsV1().ReplicaSets(ns).List(ctx, sel)
			if err != nil {
				return nil, err
			}
			for _, r := range l.Items {
				names = append(names, r.Name)
			}
		}
		for _, n := range names {
			out[ns+"/"+n] = true
		}
	}
	return out, nil
}

// createOnce creates the job's object ns/name, idempotently: creates are
// by name, so an object that exists already carrying the job's label is
// this job's (an earlier attempt whose answer was lost, or an earlier run
// that was killed) and counts as created; an error that is not an answer
// (a broken connection, a 5xx, a 429) is tried again until ctx ends. A
// load killed mid-run and run again converges to the same objects.
func createOnce(ctx context.Context, cs kubernetes.Interface, job *Job, extra map[string]string, ns, name string) (uid types.UID, rv, kind string, err error) {
	err = untilAnswered(ctx, func() error {
		var err error
		uid, rv, kind, err = create(ctx, cs, job, extra, ns, name)
		if !apierrors.IsAlreadyExists(err) {
			return err
		}
		var m metav1.Object
		var gerr error
		if job.Object.Kind == KindDeployment {
			m, gerr = cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		} else {
			m, gerr = cs.AppsV1().ReplicaSets(ns).Get(ctx, name, metav1.GetOptions{})
		}
		if err := adoptable(job, m, gerr, err); err != nil {
			return err
		}
		uid, rv, kind = m.GetUID(), m.GetResourceVersion(), job.Object.Kind
		return nil
	})
	return uid, rv, kind, err
}

// createServiceOnce creates the Service of the job's object name, as
// createOnce the object: one that exists with the job's label counts as
// created, and what is not the apiserver's answer is tried again.
func createServiceOnce(ctx context.Context, cs kubernetes.Interface, job *Job, extra map[string]string, ns, name string) (*corev1.Service, error) {
	var svc *corev1.Service
	err := untilAnswered(ctx, func() error {
		var err error
		svc, err = cs.CoreV1().Services(ns).Create(ctx, service(job, extra, ns, name), metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			return err
		}
		got, gerr := cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err := adoptable(job, got, gerr, err); err != nil {
			return err
		}
		svc = got
		return nil
	})
	return svc, err
}

// adoptable says whether got, the object found (gerr: the get's error)
// where a create answered exists (err), is the job's own: nil if so.
func adoptable(job *Job, got metav1.Object, gerr, exists error) error {
	if gerr != nil {
		return gerr
	}
	if l := got.GetLabels()[JobLabel]; l != job.Name {
		return fmt.Errorf("%w (not this job's: label %s=%q)", exists, JobLabel, l)
	}
	return nil
}

// untilAnswered runs try until it succeeds, fails with the apiserver's
// answer about the object (not retriable), or ctx ends, backing off from
// 50 ms to 1 s between tries.
func untilAnswered(ctx context.Context, try func() error) error {
	backoff := 50 * time.Millisecond
	for {
		err := try()
		if err == nil || !retriable(err) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// retriable: err is not the apiserver's answer about the object (a
// connection that broke, a timeout, overload), so trying again is safe.
func retriable(err error) bool {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return true // no Status: the connection, not the apiserver
	}
	code := st.Status().Code
	return code == http.StatusTooManyRequests || code >= 500
}

// withLabels is own with extra's labels added (own's win).
func withLabels(extra, own map[string]string) map[string]string {
	out := make(map[string]string, len(extra)+len(own))
	for k, v := range extra {
		out[k] = v
	}
	for k, v := range own {
		out[k] = v
	}
	return out
}

func create(ctx context.Context, cs kubernetes.Interface, job *Job, extra map[string]string, ns, name string) (types.UID, string, string, error) {
	labels := map[string]string{JobLabel: job.Name, "app": name}
	meta := metav1.ObjectMeta{Name: name, Namespace: ns, Labels: withLabels(extra, map[string]string{JobLabel: job.Name})}
	// The selector is the job's own labels; the pods carry extra's too.
	sel := &metav1.LabelSelector{MatchLabels: labels}
	replicas := job.Object.Replicas
	switch job.Object.Kind {
	case KindDeployment:
		d, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: meta,
			Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: sel, Template: template(job, withLabels(extra, labels))}}, metav1.CreateOptions{})
		if err != nil {
			return "", "", "", err
		}
		return d.UID, d.ResourceVersion, KindDeployment, nil
	default:
		rs, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: meta,
			Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: sel, Template: template(job, withLabels(extra, labels))}}, metav1.CreateOptions{})
		if err != nil {
			return "", "", "", err
		}
		return rs.UID, rs.ResourceVersion, KindReplicaSet, nil
	}
}

func scale(ctx context.Context, cs kubernetes.Interface, kind, ns, name string, to int32) (metav1.Object, error) {
	patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, to))
	if kind == KindDeployment {
		return cs.AppsV1().Deployments(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	rs, err := cs.AppsV1().ReplicaSets(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return nil, err
	}
	return rs, nil
}
