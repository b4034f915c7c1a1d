package apiserver_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/apiserver"
	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// testStall is the watch stall timeout the idle-watch tests run with:
// small, but with room for the timer that takes an idle stream's deadline
// off (at a quarter of it) to run late on a loaded machine.
const testStall = 500 * time.Millisecond

// proto is one way of reaching an apiserver: plain HTTP/1.1, or TLS with
// HTTP/2 as client-go negotiates it.
type proto struct {
	name  string
	major int // the HTTP major version the responses must have come in
	url   string
	cfg   *rest.Config
}

// stallServers starts one etcd and two apiservers on it, one plain
// (HTTP/1.1) and one TLS (HTTP/2), with the stall timeout testStall and
// mutate applied.
func stallServers(t *testing.T, mutate func(*apiserver.Options)) []proto {
	t.Helper()
	url, _ := testenv.Etcd(t)
	opts := func(o *apiserver.Options) {
		o.WatchStallTimeout = testStall
		if mutate != nil {
			mutate(o)
		}
	}
	plain := testenv.StartAPIServer(t, url, opts)
	p := testenv.NewPKI(t)
	secure := p.Secure(t, nil, apiserver.ModeAlwaysAllow)
	tls := testenv.StartAPIServer(t, url, func(o *apiserver.Options) { opts(o); secure(o) })
	return []proto{
		{name: "http1", major: 1, url: plain.URL, cfg: rest.CopyConfig(plain.Config)},
		{name: "h2", major: 2, url: tls.URL, cfg: p.ClientConfig(t, tls.Config, "admin", "system:masters")},
	}
}

// seenResponses records the protocol and content type of every response
// a client got.
type seenResponses struct {
	mu    sync.Mutex
	proto map[int]int
	ctype map[string]int
}

func (s *seenResponses) RoundTrip(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err == nil && r.URL.Query().Get("watch") == "true" {
			s.mu.Lock()
			s.proto[resp.ProtoMajor]++
			s.ctype[resp.Header.Get("Content-Type")]++
			s.mu.Unlock()
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// client is pr's client-go clientset speaking JSON or protobuf, and what
// its watches' responses came in.
func (pr proto) client(t *testing.T, protobuf bool) (kubernetes.Interface, *seenResponses) {
	t.Helper()
	cfg := rest.CopyConfig(pr.cfg)
	cfg.ContentType, cfg.AcceptContentTypes = "application/json", "application/json"
	if protobuf {
		cfg.ContentType, cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf,application/json"
	}
	seen := &seenResponses{proto: map[int]int{}, ctype: map[string]int{}}
	cfg.Wrap(seen.RoundTrip)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, seen
}

func (s *seenResponses) check(t *testing.T, major int, protobuf bool) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.proto) != 1 || s.proto[major] == 0 {
		t.Errorf("watch responses by HTTP major version %v, want all %d", s.proto, major)
	}
	want := "application/json"
	if protobuf {
		want = "application/vnd.kubernetes.protobuf;stream=watch"
	}
	if len(s.ctype) != 1 || s.ctype[want] == 0 {
		t.Errorf("watch responses by content type %v, want all %s", s.ctype, want)
	}
}

// A watch that asked for no bookmarks, on a set where nothing changes,
// stays open for three times the stall timeout and then gets the next
// change: the stall timeout bounds a write, not a quiet stream. On HTTP/1.1
// and HTTP/2, JSON and protobuf.
func TestIdleWatchWithoutBookmarksStaysOpen(t *testing.T) {
	for _, pr := range stallServers(t, nil) {
		for _, protobuf := range []bool{false, true} {
			name := pr.name + "/json"
			if protobuf {
				name = pr.name + "/protobuf"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				cs, seen := pr.client(t, protobuf)
				ctx := ctxT(t)
				cmName := "idle-" + strings.ReplaceAll(name, "/", "-")
				cms := cs.CoreV1().ConfigMaps("default")
				cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cmName}, Data: map[string]string{"n": "0"}}, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: cm.ResourceVersion,
					FieldSelector: fields.OneTermEqualSelector("metadata.name", cmName).String()})
				if err != nil {
					t.Fatal(err)
				}
				defer w.Stop()
				idle := time.NewTimer(3 * testStall)
				select {
				case ev, ok := <-w.ResultChan():
					t.Fatalf("a quiet watch without bookmarks got %v (open %v) before 3x the stall timeout: %v", ev.Type, ok, ev.Object)
				case <-idle.C:
				}
				cm.Data["n"] = "1"
				upd, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						t.Fatal("the watch ended instead of delivering the change")
					}
					got, isCM := ev.Object.(*corev1.ConfigMap)
					if ev.Type != watch.Modified || !isCM || got.ResourceVersion != upd.ResourceVersion {
						t.Fatalf("after %v idle: got %v %#v, want MODIFIED at %s", 3*testStall, ev.Type, ev.Object, upd.ResourceVersion)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the change never arrived on the idle watch")
				}
				seen.check(t, pr.major, protobuf)
			})
		}
	}
}

// A watch with timeoutSeconds ends at that time with a clean end of stream
// (HTTP/1.1's last chunk, HTTP/2's END_STREAM): the body reads to io.EOF;
// one without ends likewise after the randomized --min-request-timeout,
// in [min, 2*min).
func TestWatchTimeoutEndsCleanly(t *testing.T) {
	const minTimeout = time.Second
	for _, pr := range stallServers(t, func(o *apiserver.Options) { o.MinRequestTimeout = minTimeout }) {
		for _, c := range []struct {
			name     string
			query    string
			min, max time.Duration
		}{
			{"timeoutSeconds", "&timeoutSeconds=1", time.Second, 2 * time.Second},
			{"min-request-timeout", "", minTimeout, 2 * minTimeout},
		} {
			t.Run(pr.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				hc, err := rest.HTTPClientFor(pr.cfg)
				if err != nil {
					t.Fatal(err)
				}
				req, _ := http.NewRequestWithContext(ctxT(t), "GET", pr.url+"/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=false&resourceVersion=0"+c.query, nil)
				start := time.Now()
				resp, err := hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				if resp.StatusCode != 200 || resp.ProtoMajor != pr.major {
					t.Fatalf("watch: %s over HTTP/%d, want 200 over HTTP/%d", resp.Status, resp.ProtoMajor, pr.major)
				}
				// ReadAll returns nil at io.EOF: a stream reset or a cut
				// HTTP/1.1 body is an error.
				body, err := io.ReadAll(resp.Body)
				took := time.Since(start)
				if err != nil {
					t.Fatalf("the watch ended after %v with %v, want a clean end of stream", took.Round(time.Millisecond), err)
				}
				if len(body) != 0 {
					t.Errorf("a quiet watch wrote %q", body)
				}
				// The server's clock starts after the request arrives; 2 s
				// of slack for a loaded machine on the upper side.
				if took < c.min || took > c.max+2*time.Second {
					t.Errorf("the watch ended after %v, want within [%v, %v)", took.Round(time.Millisecond), c.min, c.max)
				}
			})
		}
	}
}

// registeredWatchers reads apiserver_registered_watchers for configmaps
// from pr's /metrics.
func registeredWatchers(t *testing.T, hc *http.Client, pr proto) float64 {
	t.Helper()
	return metricVia(t, hc, pr.url, `apiserver_registered_watchers{resource="configmaps"}`)
}

// A client that stops reading while events are queued for it is still cut
// once a write has stalled for the stall timeout: on HTTP/1.1 a raw
// connection with a small receive buffer, on HTTP/2 a stream whose flow
// control window is 64 KiB. Several MiB of events fill what buffers there
// are; the watch must be gone within seconds.
func TestStalledWatchIsCut(t *testing.T) {
	for _, pr := range stallServers(t, nil) {
		t.Run(pr.name, func(t *testing.T) {
			t.Parallel()
			hc, err := rest.HTTPClientFor(pr.cfg)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := kubernetes.NewForConfig(pr.cfg)
			if err != nil {
				t.Fatal(err)
			}
			// 12 MiB through etcd took up to a minute on a loaded 2-core
			// machine.
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			ns := "stall-" + pr.name
			if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			path := "/api/v1/namespaces/" + ns + "/configmaps?watch=true&sendInitialEvents=false&resourceVersion=0"
			if pr.major == 1 {
				conn, err := net.Dial("tcp", strings.TrimPrefix(pr.url, "http://"))
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				if tc, ok := conn.(*net.TCPConn); ok {
					_ = tc.SetReadBuffer(4 << 10)
				}
				fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
			} else {
				// A client of its own whose streams take 64 KiB before the
				// server must wait for it to read.
				tc, err := rest.TLSConfigFor(pr.cfg)
				if err != nil {
					t.Fatal(err)
				}
				tr := &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true,
					HTTP2: &http.HTTP2Config{MaxReceiveBufferPerStream: 64 << 10, MaxReceiveBufferPerConnection: 64 << 10}}
				defer tr.CloseIdleConnections()
				req, _ := http.NewRequestWithContext(ctx, "GET", pr.url+path, nil)
				resp, err := (&http.Client{Transport: tr}).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				if resp.ProtoMajor != 2 {
					t.Fatalf("the stalled watch came over HTTP/%d", resp.ProtoMajor)
				}
			}
			testenv.Eventually(t, 10*time.Second, "the stalled watch registered", func() (bool, error) {
				return registeredWatchers(t, hc, pr) >= 1, nil
			})
			// 12 MiB of events the client does not read.
			cms := cs.CoreV1().ConfigMaps(ns)
			for i := range 24 {
				cm := bigConfigMap(fmt.Sprintf("big-%d", i), 512<<10, i)
				if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			written := time.Now()
			testenv.Eventually(t, 10*time.Second, "the watcher that stopped reading closed", func() (bool, error) {
				return registeredWatchers(t, hc, pr) == 0, nil
			})
			t.Logf("%s: the stalled watch closed %v after the last write (stall timeout %v)", pr.name, time.Since(written).Round(time.Millisecond), testStall)
		})
	}
}
