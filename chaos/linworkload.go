package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Linearizability is the workload the linearizable invariant checks:
// Clients clients spread over every apiserver (client i prefers apiserver
// i mod their number), each sending one operation at a time at most QPS a
// second on Objects contended ConfigMaps: a consistent GET (etcd), a
// consistent LIST of all the objects (the watch cache), or a
// compare-and-set update of one object from the version the client last
// read of it, in equal shares.
type Linearizability struct {
	// Clients default to two per apiserver; Objects to 3; QPS (per client)
	// to 10.
	Clients int     `json:"clients,omitempty"`
	Objects int     `json:"objects,omitempty"`
	QPS     float64 `json:"qps,omitempty"`
}

// The workload's bounds: beyond them the history outgrows the checker.
const (
	maxLinClients = 32
	maxLinObjects = 16
	maxLinQPS     = 100
)

func (l *Linearizability) defaults(apiservers int) {
	if l.Clients == 0 {
		l.Clients = 2 * max(apiservers, 1)
	}
	if l.Objects == 0 {
		l.Objects = 3
	}
	if l.QPS == 0 {
		l.QPS = 10
	}
}

func (l Linearizability) validate() error {
	if l.Clients < 0 || l.Clients > maxLinClients || l.Objects < 0 || l.Objects > maxLinObjects || l.QPS < 0 || l.QPS > maxLinQPS {
		return fmt.Errorf("linearizability: clients %d (0–%d), objects %d (0–%d), qps %g (0–%d)",
			l.Clients, maxLinClients, l.Objects, maxLinObjects, l.QPS, maxLinQPS)
	}
	return nil
}

// linLabel marks the workload's objects, which its LISTs select.
const linLabel = "kstep.dev/linearizability"

// linWorkload runs the workload and records its history.
type linWorkload struct {
	cfg   Linearizability
	start time.Time
	apis  int
	keys  []string
	mu    sync.Mutex
	inits []LinOp
	ops   []LinOp
	stats LinStats
}

func linName(i int) string { return fmt.Sprintf("lin-%d", i) }

// setup creates the objects (or reads them, if they exist) and records
// their initial states.
func (w *linWorkload) setup(ctx context.Context, cs kubernetes.Interface, labels map[string]string) error {
	w.start = time.Now()
	for i := range w.cfg.Objects {
		name := linName(i)
		l := map[string]string{linLabel: "true"}
		for k, v := range labels {
			l[k] = v
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: probeNamespace, Labels: l}, Data: map[string]string{"v": "init"}}
		got, err := cs.CoreV1().ConfigMaps(probeNamespace).Create(ctx, cm, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			got, err = cs.CoreV1().ConfigMaps(probeNamespace).Get(ctx, name, metav1.GetOptions{})
		}
		if err != nil {
			return fmt.Errorf("linearizability object %s: %w", name, err)
		}
		rv, _ := strconv.ParseInt(got.ResourceVersion, 10, 64)
		w.keys = append(w.keys, name)
		w.inits = append(w.inits, LinOp{Kind: linInit, Key: name, RV: rv, Got: got.Data["v"]})
	}
	return nil
}

func (w *linWorkload) now() int64 { return int64(time.Since(w.start)) }

func (w *linWorkload) record(ops ...LinOp) {
	w.mu.Lock()
	w.ops = append(w.ops, ops...)
	w.mu.Unlock()
}

// run drives every client until ctx ends; clients[i] is client i's
// clientset.
func (w *linWorkload) run(ctx context.Context, clients []kubernetes.Interface, timeout time.Duration) {
	var wg sync.WaitGroup
	for i, cs := range clients {
		wg.Go(func() { w.client(ctx, i, cs, timeout) })
	}
	wg.Wait()
}

func (w *linWorkload) client(ctx context.Context, id int, cs kubernetes.Interface, timeout time.Duration) {
	rng := rand.New(rand.NewPCG(uint64(id)+1, uint64(w.start.UnixNano())))
	last := map[string]int64{} // the version this client last read of each object
	every := time.Duration(float64(time.Second) / w.cfg.QPS)
	apiserver := id % max(w.apis, 1)
	seq := 0
	for next := time.Now(); ctx.Err() == nil; {
		sleep(ctx, time.Until(next))
		next = time.Now().Add(every)
		if ctx.Err() != nil {
			return
		}
		key := w.keys[rng.IntN(len(w.keys))]
		kind := []string{LinGet, LinList, LinCAS}[rng.IntN(3)]
		if kind == LinCAS && last[key] == 0 {
			kind = LinGet
		}
		base := LinOp{Client: id, APIServer: apiserver, Kind: kind, Key: key}
		rctx, cancel := context.WithTimeout(ctx, timeout)
		switch kind {
		case LinGet:
			base.Call = w.now()
			got, err := cs.CoreV1().ConfigMaps(probeNamespace).Get(rctx, key, metav1.GetOptions{})
			base.Return = w.now()
			if err != nil {
				w.failedRead(ctx)
				break
			}
			base.RV, _ = strconv.ParseInt(got.ResourceVersion, 10, 64)
			base.Got = got.Data["v"]
			last[key] = base.RV
			w.record(base)
		case LinList:
			base.Call = w.now()
			l, err := cs.CoreV1().ConfigMaps(probeNamespace).List(rctx, metav1.ListOptions{LabelSelector: linLabel + "=true"})
			base.Return = w.now()
			if err != nil {
				w.failedRead(ctx)
				break
			}
			found := map[string]corev1.ConfigMap{}
			for _, cm := range l.Items {
				found[cm.Name] = cm
			}
			ops := make([]LinOp, 0, len(w.keys))
			for _, k := range w.keys {
				o := base
				o.Key = k
				if cm, ok := found[k]; ok {
					o.RV, _ = strconv.ParseInt(cm.ResourceVersion, 10, 64)
					o.Got = cm.Data["v"]
					last[k] = o.RV
				} else {
					o.Absent = true
				}
				ops = append(ops, o)
			}
			w.mu.Lock()
			w.stats.Lists++
			w.mu.Unlock()
			w.record(ops...)
		case LinCAS:
			seq++
			base.ExpectRV = last[key]
			base.Value = fmt.Sprintf("c%d-%d", id, seq)
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: key, Namespace: probeNamespace, ResourceVersion: strconv.FormatInt(base.ExpectRV, 10),
				Labels: map[string]string{linLabel: "true"}}, Data: map[string]string{"v": base.Value}}
			var out corev1.ConfigMap
			base.Call = w.now()
			// The REST client without client-go's retries: a retry after a
			// 5xx that had taken effect would answer 409 for a write that
			// happened.
			err := cs.CoreV1().RESTClient().Put().Namespace(probeNamespace).Resource("configmaps").Name(key).
				Body(cm).MaxRetries(0).Do(rctx).Into(&out)
			base.Return = w.now()
			var st apierrors.APIStatus
			switch {
			case err == nil:
				base.Outcome = LinOK
				base.RV, _ = strconv.ParseInt(out.ResourceVersion, 10, 64)
				last[key] = base.RV
			case apierrors.IsConflict(err):
				base.Outcome = LinConflict
			case errors.As(err, &st) && st.Status().Code == http.StatusTooManyRequests:
				// Refused before it was tried: no effect, nothing learnt.
				cancel()
				continue
			default:
				if ctx.Err() != nil && rctx.Err() != nil {
					// Cut short by the end of the run: it may still land,
					// an unknown like any other.
					base.Err = "run ended"
				} else {
					base.Err = err.Error()
				}
				base.Outcome = LinUnknown
				delete(last, key)
			}
			w.record(base)
		}
		cancel()
	}
}

func (w *linWorkload) failedRead(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	w.mu.Lock()
	w.stats.FailedReads++
	w.mu.Unlock()
}

// history is what was recorded, for the check.
func (w *linWorkload) history() (inits, ops []LinOp, stats LinStats) {
	w.mu.Lock()
	defer w.mu.Unlock()
	stats = w.stats
	stats.Clients, stats.Objects, stats.APIServers = w.cfg.Clients, w.cfg.Objects, w.apis
	return append([]LinOp(nil), w.inits...), append([]LinOp(nil), w.ops...), stats
}
