package apiserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/apiserver"
	"github.com/kstep-dev/kstep/internal/testenv"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

const (
	protobufCT      = "application/vnd.kubernetes.protobuf"
	protobufWatchCT = "application/vnd.kubernetes.protobuf;stream=watch"
)

// recorder remembers the Content-Type of every answer a client got, so a
// test fails if protobuf was silently not used.
type recorder struct {
	mu   sync.Mutex
	seen []answer
}

type answer struct {
	method, path, query string
	code                int
	ct                  string
}

func (r *recorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil {
			r.mu.Lock()
			r.seen = append(r.seen, answer{req.Method, req.URL.Path, req.URL.RawQuery, resp.StatusCode, resp.Header.Get("Content-Type")})
			r.mu.Unlock()
		}
		return resp, err
	})
}

// saw reports whether some request's query contained query.
func (r *recorder) saw(query string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.seen {
		if strings.Contains(a.query, query) {
			return true
		}
	}
	return false
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// expect fails unless some successful answer to method on path with a
// query containing query was seen, and every successful such answer had
// Content-Type ct. Watches are matched only by a query with watch=true.
func (r *recorder) expect(t *testing.T, method, path, query, ct string) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, a := range r.seen {
		if a.method != method || a.path != path || !strings.Contains(a.query, query) || a.code >= 300 {
			continue
		}
		if strings.Contains(a.query, "watch=true") != strings.Contains(query, "watch=true") {
			continue
		}
		n++
		if a.ct != ct {
			t.Errorf("%s %s?%s: %d with Content-Type %q, want %q", a.method, a.path, a.query, a.code, a.ct, ct)
		}
	}
	if n == 0 {
		t.Errorf("no successful %s %s?%s seen (answers: %v)", method, path, query, r.seen)
	}
}

// clients are a default client-go clientset (it prefers protobuf) and a
// JSON-only one on the same apiserver, each recording its answers.
func clients(t *testing.T, api *testenv.APIServer) (pb, js *kubernetes.Clientset, pbRec, jsRec *recorder) {
	t.Helper()
	pbRec, jsRec = &recorder{}, &recorder{}
	pbCfg := rest.CopyConfig(api.Config)
	pbCfg.WrapTransport = pbRec.wrap
	jsCfg := rest.CopyConfig(api.Config)
	jsCfg.ContentType, jsCfg.AcceptContentTypes = "application/json", "application/json"
	jsCfg.WrapTransport = jsRec.wrap
	var err error
	if pb, err = kubernetes.NewForConfig(pbCfg); err != nil {
		t.Fatal(err)
	}
	if js, err = kubernetes.NewForConfig(jsCfg); err != nil {
		t.Fatal(err)
	}
	return pb, js, pbRec, jsRec
}

// same fails unless a and b are equal but for their apiVersion and kind
// (which client-go's typed decoding leaves or clears by media type).
func same(t *testing.T, what string, a, b runtime.Object) {
	t.Helper()
	a, b = a.DeepCopyObject(), b.DeepCopyObject()
	for _, o := range []runtime.Object{a, b} {
		o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
		clearItemKinds(o)
	}
	if !apiequality.Semantic.DeepEqual(a, b) {
		t.Fatalf("%s: protobuf and JSON clients got different objects:\n pb %+v\njson %+v", what, a, b)
	}
}

func clearItemKinds(o runtime.Object) {
	switch l := o.(type) {
	case *corev1.PodList:
		for i := range l.Items {
			l.Items[i].TypeMeta = metav1.TypeMeta{}
		}
	case *eventsv1.EventList:
		for i := range l.Items {
			l.Items[i].TypeMeta = metav1.TypeMeta{}
		}
	case *corev1.ConfigMapList:
		for i := range l.Items {
			l.Items[i].TypeMeta = metav1.TypeMeta{}
		}
	}
}

// A default clientset (protobuf) and a JSON-only one see the same results
// of create, get, update, patch, list (from the cache and from etcd, and a
// converted resource's), watch, scale, binding and delete; every
// successful answer to the protobuf client was protobuf.
func TestProtobufClientMatchesJSON(t *testing.T) {
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, nil)
	pb, js, pbRec, jsRec := clients(t, api)
	ctx := ctxT(t)
	pods, jsPods := pb.CoreV1().Pods("default"), js.CoreV1().Pods("default")

	// A watch over each media type from before the writes.
	l0, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pbW, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: l0.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer pbW.Stop()
	jsW, err := jsPods.Watch(ctx, metav1.ListOptions{ResourceVersion: l0.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer jsW.Stop()

	created, err := pods.Create(ctx, testPod("p1"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.UID == "" || created.ResourceVersion == "" || created.Spec.Containers[0].Image != "registry.kstep.local/app:v1" {
		t.Fatalf("create over protobuf returned %+v", created.ObjectMeta)
	}
	for i := 2; i <= 4; i++ {
		if _, err := jsPods.Create(ctx, testPod(fmt.Sprint("p", i)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := pods.Get(ctx, "p1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jsGot, err := jsPods.Get(ctx, "p1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	same(t, "get", got, jsGot)
	same(t, "create", created, jsGot)
	cached, err := pods.Get(ctx, "p1", metav1.GetOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	same(t, "get from the cache", cached, jsGot)

	got.Labels["tier"] = "front"
	updated, err := pods.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	patched, err := pods.Patch(ctx, "p1", types.MergePatchType, []byte(`{"metadata":{"annotations":{"a":"b"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Labels["tier"] != "front" || patched.Annotations["a"] != "b" || patched.Labels["tier"] != "front" {
		t.Fatalf("update/patch over protobuf: labels %v annotations %v", patched.Labels, patched.Annotations)
	}
	if jsGot, err = jsPods.Get(ctx, "p1", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	same(t, "patch", patched, jsGot)

	// client-go builds Bind's request without the typed verbs' protobuf
	// preference: it asks for, and gets, JSON.
	if err := pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "p2"}, Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("binding over protobuf: %v", err)
	}
	if _, err := pods.Get(ctx, "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get of a missing pod over protobuf: want NotFound, got %v", err)
	}

	for _, opts := range []metav1.ListOptions{
		{},                                   // consistent, from the cache
		{ResourceVersion: "0"},               // any, from the cache
		{LabelSelector: "app=web", Limit: 2}, // a page from etcd
		{ResourceVersion: patched.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact}, // etcd at a revision
		{FieldSelector: "metadata.name=p3"},
	} {
		pl, err := pods.List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		jl, err := jsPods.List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		if opts.Limit > 0 {
			if pl.Continue == "" || jl.Continue == "" || len(pl.Items) != 2 {
				t.Fatalf("page of 2: %d items, continue %q / %q", len(pl.Items), pl.Continue, jl.Continue)
			}
			next, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app=web", Limit: 2, Continue: pl.Continue})
			if err != nil {
				t.Fatal(err)
			}
			if len(next.Items) != 2 || next.Continue != "" {
				t.Fatalf("protobuf second page: %d items, continue %q", len(next.Items), next.Continue)
			}
		}
		if opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact && pl.ResourceVersion != patched.ResourceVersion {
			t.Fatalf("exact list at %s answered at %s", patched.ResourceVersion, pl.ResourceVersion)
		}
		// The apiserver's own writes (leases) move etcd's revision
		// between the two lists: their versions and continue tokens
		// may differ, their items may not.
		pl.ResourceVersion, pl.Continue, jl.ResourceVersion, jl.Continue = "", "", "", ""
		same(t, fmt.Sprintf("list %+v", opts), pl, jl)
		if want := map[bool]int{true: 1, false: 2}[opts.FieldSelector != ""]; len(pl.Items) < want {
			t.Fatalf("list %+v: %d items", opts, len(pl.Items))
		}
	}

	// Watch: both streams carry the same events.
	if err := pods.Delete(ctx, "p4", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"ADDED p1", "ADDED p2", "ADDED p3", "ADDED p4", "MODIFIED p1", "MODIFIED p1", "MODIFIED p2", "DELETED p4"}
	pbEvs, jsEvs := collect(t, pbW, len(want)), collect(t, jsW, len(want))
	for i := range want {
		p := pbEvs[i].Object.(*corev1.Pod)
		if s := string(pbEvs[i].Type) + " " + p.Name; s != want[i] {
			t.Fatalf("protobuf watch event %d: %s, want %s", i, s, want[i])
		}
		if pbEvs[i].Type != jsEvs[i].Type {
			t.Fatalf("watch event %d: protobuf %s, JSON %s", i, pbEvs[i].Type, jsEvs[i].Type)
		}
		same(t, "watch event "+want[i], pbEvs[i].Object, jsEvs[i].Object)
	}

	// Other kinds: a ReplicaSet's scale, configmaps, events.k8s.io events
	// (served through a conversion from core events).
	if _, err := pb.AppsV1().ReplicaSets("default").Create(ctx, testRS("rs", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sc, err := pb.AppsV1().ReplicaSets("default").GetScale(ctx, "rs", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jsc, err := js.AppsV1().ReplicaSets("default").GetScale(ctx, "rs", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	same(t, "scale", sc, jsc)
	if sc.Spec.Replicas != 2 {
		t.Fatalf("scale over protobuf: %+v", sc.Spec)
	}
	if _, err := pb.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cml, err := pb.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jcml, err := js.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{ResourceVersion: cml.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	if err != nil {
		t.Fatal(err)
	}
	same(t, "configmap list", cml, jcml)
	ev := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e1"}, EventTime: metav1.NewMicroTime(time.Now().Truncate(time.Microsecond)),
		ReportingController: "kstep.dev/test", ReportingInstance: "t", Action: "Test", Reason: "Testing", Type: "Normal",
		Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "p1"}, Note: "hello"}
	if _, err := pb.EventsV1().Events("default").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	el, err := pb.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jel, err := js.EventsV1().Events("default").List(ctx, metav1.ListOptions{ResourceVersion: el.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	if err != nil {
		t.Fatal(err)
	}
	same(t, "events.k8s.io list", el, jel)
	if len(el.Items) != 1 || el.Items[0].Note != "hello" {
		t.Fatalf("events.k8s.io list over protobuf: %+v", el.Items)
	}
	ew, err := pb.EventsV1().Events("default").Watch(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if e := collect(t, ew, 1)[0]; e.Object.(*eventsv1.Event).Note != "hello" {
		t.Fatalf("events.k8s.io watch over protobuf: %+v", e.Object)
	}
	ew.Stop()

	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=web"}); err != nil {
		t.Fatal(err)
	}

	const pods1 = "/api/v1/namespaces/default/pods"
	for _, c := range []struct{ method, path, query, ct string }{
		{"POST", pods1, "", protobufCT},
		{"GET", pods1 + "/p1", "", protobufCT},
		{"GET", pods1 + "/p1", "resourceVersion=0", protobufCT},
		{"PUT", pods1 + "/p1", "", protobufCT},
		{"PATCH", pods1 + "/p1", "", protobufCT},
		{"GET", pods1, "", protobufCT},
		{"GET", pods1, "limit=2", protobufCT},
		{"GET", pods1, "continue=", protobufCT},
		{"GET", pods1, "resourceVersionMatch=Exact", protobufCT},
		{"GET", pods1, "watch=true", protobufWatchCT},
		{"DELETE", pods1 + "/p4", "", protobufCT},
		{"DELETE", pods1, "labelSelector=", protobufCT},
		{"GET", "/apis/apps/v1/namespaces/default/replicasets/rs/scale", "", protobufCT},
		{"GET", "/api/v1/namespaces/default/configmaps", "", protobufCT},
		{"GET", "/apis/events.k8s.io/v1/namespaces/default/events", "", protobufCT},
		{"GET", "/apis/events.k8s.io/v1/namespaces/default/events", "watch=true", protobufWatchCT},
	} {
		pbRec.expect(t, c.method, c.path, c.query, c.ct)
	}
	jsRec.expect(t, "GET", pods1, "", "application/json")
	jsRec.expect(t, "GET", pods1, "watch=true", "application/json")
}

func collect(t *testing.T, w watch.Interface, n int) []watch.Event {
	t.Helper()
	var out []watch.Event
	timeout := time.After(10 * time.Second)
	for len(out) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed after %d of %d events", len(out), n)
			}
			if ev.Type == watch.Error {
				t.Fatalf("watch error: %v", apierrors.FromObject(ev.Object))
			}
			if ev.Type != watch.Bookmark {
				out = append(out, ev)
			}
		case <-timeout:
			t.Fatalf("%d of %d watch events after 10s", len(out), n)
		}
	}
	return out
}

// An informer over protobuf (list, then watch with bookmarks) sees adds,
// updates and deletes.
func TestProtobufInformer(t *testing.T) {
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, nil)
	pb, _, pbRec, _ := clients(t, api)
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	if _, err := pb.CoreV1().Pods("default").Create(ctx, testPod("before"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f := informers.NewSharedInformerFactory(pb, 0)
	inf := f.Core().V1().Pods().Informer()
	var s seen
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { s.add("ADDED", o) },
		UpdateFunc: func(_, o any) { s.add("MODIFIED", o) },
		DeleteFunc: func(o any) { s.add("DELETED", o) },
	}); err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	pods := pb.CoreV1().Pods("default")
	if _, err := pods.Create(ctx, testPod("after"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Patch(ctx, "after", types.MergePatchType, []byte(`{"metadata":{"labels":{"v":"2"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "before", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"ADDED before", "ADDED after", "MODIFIED after", "DELETED before"}
	testenv.Eventually(t, 10*time.Second, "informer events", func() (bool, error) {
		return len(s.snapshot()) >= len(want), nil
	})
	got := s.snapshot()
	for i, w := range want {
		if f := strings.Fields(got[i]); f[0]+" "+f[1] != w {
			t.Fatalf("informer events %v, want %v", got, want)
		}
	}
	if s.errs != nil {
		t.Fatalf("out of order: %v", s.errs)
	}
	obj, ok, err := inf.GetStore().GetByKey("default/after")
	if err != nil || !ok || obj.(*corev1.Pod).Labels["v"] != "2" {
		t.Fatalf("informer store: %v %v %v", obj, ok, err)
	}
	// client-go's informers open a streaming list (sendInitialEvents):
	// one watch, no list; its initial events and the bookmark that ends
	// them came over protobuf.
	pbRec.expect(t, "GET", "/api/v1/pods", "watch=true", protobufWatchCT)
	if !pbRec.saw("sendInitialEvents=true") {
		t.Fatal("the informer did not open a streaming list")
	}
}

// A watch from a compacted resourceVersion, and one from a version the
// watch cache's window no longer holds, get the ERROR event with 410
// Expired over protobuf too.
func TestProtobufWatchExpired(t *testing.T) {
	url, etcdCli := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, func(o *apiserver.Options) { o.WatchCacheSize = 16 })
	pb, _, pbRec, _ := clients(t, api)
	ctx := ctxT(t)
	pods := pb.CoreV1().Pods("default")
	first, err := pods.Create(ctx, testPod("old"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if _, err := pods.Patch(ctx, "old", types.MergePatchType, []byte(fmt.Sprintf(`{"metadata":{"labels":{"n":"%d"}}}`, i)), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	expectExpired := func(what string, cs *kubernetes.Clientset) {
		t.Helper()
		w, err := cs.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		select {
		case ev := <-w.ResultChan():
			if ev.Type != watch.Error || !apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)) {
				t.Fatalf("%s: want an ERROR event with 410 Expired, got %v %v", what, ev.Type, ev.Object)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no event", what)
		}
	}
	expectExpired("out of the cache's window", pb)

	l, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rev, _ := strconv.ParseInt(l.ResourceVersion, 10, 64)
	if _, err := etcdCli.Compact(ctx, rev); err != nil {
		t.Fatal(err)
	}
	// A cache started after the compaction cannot reach back past it.
	fresh := testenv.StartAPIServer(t, url, nil)
	pb2, _, pbRec2, _ := clients(t, fresh)
	expectExpired("compacted", pb2)
	pbRec.expect(t, "GET", "/api/v1/namespaces/default/pods", "watch=true", protobufWatchCT)
	pbRec2.expect(t, "GET", "/api/v1/namespaces/default/pods", "watch=true", protobufWatchCT)
}

// kubectl's requests are unchanged: JSON, YAML and Tables (lists, single
// objects and watches) whatever protobuf clients do beside them.
func TestKubectlMediaTypesUnchanged(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	if _, err := e.cs.CoreV1().Pods("default").Create(ctx, testPod("k"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
	for _, c := range []struct{ uri, accept, ct, contains string }{
		{"/api/v1/namespaces/default/pods", table, "application/json", `"kind":"Table"`},
		{"/api/v1/namespaces/default/pods/k", table, "application/json", `"kind":"Table"`},
		{"/api/v1/namespaces/default/pods?watch=true&resourceVersion=0&timeoutSeconds=1", table, "application/json", `"kind":"Table"`},
		{"/api/v1/namespaces/default/pods", "application/json", "application/json", `"kind":"PodList"`},
		{"/api/v1/namespaces/default/pods/k", "application/json, */*", "application/json", `"kind":"Pod"`},
		{"/api/v1/namespaces/default/pods?watch=true&resourceVersion=0&timeoutSeconds=1", "application/json", "application/json", `{"type":"ADDED","object":{"kind":"Pod"`},
		{"/api/v1/namespaces/default/pods/k", "application/yaml", "application/yaml", "kind: Pod"},
		{"/api/v1/namespaces/default/pods/k", "", "application/json", `"kind":"Pod"`},
	} {
		req, _ := http.NewRequestWithContext(ctx, "GET", e.api.URL+c.uri, nil)
		if c.accept != "" {
			req.Header.Set("Accept", c.accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != c.ct || !strings.Contains(string(b), c.contains) {
			t.Errorf("GET %s Accept %q: %d %q %.200s; want %q containing %q", c.uri, c.accept, resp.StatusCode, resp.Header.Get("Content-Type"), b, c.ct, c.contains)
		}
	}
	// Protobuf alone is acceptable now; an unknown type alone still is not.
	for accept, code := range map[string]int{protobufCT: 200, "application/cbor": 406} {
		req, _ := http.NewRequestWithContext(ctx, "GET", e.api.URL+"/api/v1/namespaces/default/pods/k", nil)
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != code {
			t.Errorf("Accept %s: %d, want %d", accept, resp.StatusCode, code)
		}
	}
}

// Typed clients other than pods: a Deployment through its whole life over
// protobuf equals the JSON client's view.
func TestProtobufDeployment(t *testing.T) {
	url, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, nil)
	pb, js, pbRec, _ := clients(t, api)
	ctx := ctxT(t)
	rs := testRS("d", 3)
	d := &appsv1.Deployment{ObjectMeta: rs.ObjectMeta, Spec: appsv1.DeploymentSpec{Replicas: rs.Spec.Replicas, Selector: rs.Spec.Selector, Template: rs.Spec.Template}}
	created, err := pb.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := pb.AppsV1().Deployments("default").UpdateScale(ctx, "d", &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "default", ResourceVersion: created.ResourceVersion},
		Spec:       autoscalingv1.ScaleSpec{Replicas: 5}}, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Spec.Replicas != 5 {
		t.Fatalf("scale over protobuf: %+v", sc.Spec)
	}
	got, err := pb.AppsV1().Deployments("default").Get(ctx, "d", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jgot, err := js.AppsV1().Deployments("default").Get(ctx, "d", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	same(t, "deployment", got, jgot)
	if *got.Spec.Replicas != 5 || got.Generation != 2 {
		t.Fatalf("deployment after scale: replicas %d generation %d", *got.Spec.Replicas, got.Generation)
	}
	pbRec.expect(t, "PUT", "/apis/apps/v1/namespaces/default/deployments/d/scale", "", protobufCT)
	pbRec.expect(t, "GET", "/apis/apps/v1/namespaces/default/deployments/d", "", protobufCT)
}
