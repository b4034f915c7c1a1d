package apiserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/apiserver"
	"github.com/kstep-dev/kstep/internal/testenv"
	"k8s.io/client-go/kubernetes"
)

func newEnvWith(t *testing.T, mutate func(*apiserver.Options)) *env {
	t.Helper()
	url, cli := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, url, mutate)
	cs, err := kubernetes.NewForConfig(api.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, etcd: cli, api: api, cs: cs}
}

// do sends one raw request (client-go would retry a 429 by itself).
func do(t testing.TB, c *http.Client, method, url, ctype, body string) (int, http.Header, []byte) {
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, url, err)
		return 0, nil, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// Under a flood of user writes at the in-flight limit, users get 429 with
// Retry-After and a Status, and node Lease renewals (their own lane) keep
// succeeding.
func TestInflightReservedLane(t *testing.T) {
	e := newEnvWith(t, func(o *apiserver.Options) { o.MaxRequestsInflight, o.MaxMutatingRequestsInflight = 2, 2 })
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 100}}
	base := e.api.URL
	code, _, body := do(t, c, "POST", base+"/api/v1/namespaces", "application/json", `{"metadata":{"name":"kube-node-lease"}}`)
	if code != 201 && code != 409 {
		t.Fatalf("namespace: %d %s", code, body)
	}
	lease := base + "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
	if code, _, body := do(t, c, "POST", lease, "application/json", `{"metadata":{"name":"node-0"},"spec":{"holderIdentity":"node-0"}}`); code != 201 {
		t.Fatalf("lease: %d %s", code, body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	var userOK, user429, leaseOK, leaseBad atomic.Int64
	var first429 atomic.Pointer[string]
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				code, h, body := do(t, c, "POST", base+"/api/v1/namespaces/default/configmaps", "application/json",
					fmt.Sprintf(`{"metadata":{"name":"flood-%d-%d"},"data":{"k":"%s"}}`, w, i, strings.Repeat("v", 4096)))
				switch code {
				case 201:
					userOK.Add(1)
				case 429:
					user429.Add(1)
					time.Sleep(5 * time.Millisecond) // as a client honouring Retry-After would, a little
					if h.Get("Retry-After") == "" {
						t.Errorf("429 without Retry-After")
					}
					s := string(body)
					first429.CompareAndSwap(nil, &s)
				}
			}
		}()
	}
	for i := 0; ctx.Err() == nil; i++ {
		patch := fmt.Sprintf(`{"spec":{"renewTime":"%s"}}`, time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"))
		if code, _, body := do(t, c, "PATCH", lease+"/node-0", "application/merge-patch+json", patch); code == 200 {
			leaseOK.Add(1)
		} else {
			leaseBad.Add(1)
			t.Errorf("lease renewal %d: %d %s", i, code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	t.Logf("flood at the limit (2 mutating): user writes %d ok, %d 429; lease renewals %d ok, %d failed", userOK.Load(), user429.Load(), leaseOK.Load(), leaseBad.Load())
	if user429.Load() == 0 {
		t.Fatal("the flood never hit the limit: the test proves nothing")
	}
	if leaseOK.Load() < 10 || leaseBad.Load() != 0 {
		t.Fatalf("lease renewals: %d ok, %d failed; want all to succeed", leaseOK.Load(), leaseBad.Load())
	}
	var st struct {
		Kind, Reason string
		Code         int
		Details      struct{ RetryAfterSeconds int }
	}
	if p := first429.Load(); p == nil || json.Unmarshal([]byte(*p), &st) != nil || st.Kind != "Status" || st.Reason != "TooManyRequests" || st.Code != 429 || st.Details.RetryAfterSeconds != 1 {
		t.Fatalf("429 body: %+v", st)
	}
	_, _, metrics := do(t, c, "GET", base+"/metrics", "", "")
	if !bytes.Contains(metrics, []byte(`apiserver_dropped_requests_total{lane="mutating"}`)) || !bytes.Contains(metrics, []byte(`apiserver_dropped_requests_total{lane="system"} 0`)) {
		t.Fatalf("metrics lack the per-lane drop counters")
	}
}

// The audit log has one event per request, with the Audit-ID the client
// got back, the user, the verb, the object and (level Request) the body.
func TestAuditLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	e := newEnvWith(t, func(o *apiserver.Options) { o.AuditLogPath, o.AuditLevel = path, apiserver.AuditRequest })
	c := &http.Client{}
	code, h, body := do(t, c, "POST", e.api.URL+"/api/v1/namespaces/default/configmaps", "application/json", `{"metadata":{"name":"audited"},"data":{"k":"v"}}`)
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	id := h.Get("Audit-ID")
	if id == "" {
		t.Fatal("no Audit-ID header")
	}
	type event struct {
		Kind, APIVersion, Level, AuditID, Stage, Verb, RequestURI string
		User                                                      struct{ Username string }
		ObjectRef                                                 struct{ Resource, Namespace, Name string }
		ResponseStatus                                            struct{ Code int }
		RequestObject                                             json.RawMessage
	}
	var got *event
	testenv.Eventually(t, 10*time.Second, "the audit event", func() error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var ev event
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				return fmt.Errorf("line %q: %w", sc.Text(), err)
			}
			if ev.AuditID == id {
				got = &ev
				return nil
			}
		}
		return fmt.Errorf("no event with auditID %s", id)
	})
	if got.Kind != "Event" || got.APIVersion != "audit.k8s.io/v1" || got.Level != "Request" || got.Stage != "ResponseComplete" ||
		got.Verb != "create" || got.User.Username == "" || got.ObjectRef.Resource != "configmaps" || got.ObjectRef.Namespace != "default" ||
		got.ResponseStatus.Code != 201 || !bytes.Contains(got.RequestObject, []byte(`"audited"`)) {
		t.Fatalf("audit event %+v", got)
	}
	_, _, metrics := do(t, c, "GET", e.api.URL+"/metrics", "", "")
	if !bytes.Contains(metrics, []byte("apiserver_audit_events_dropped_total 0")) {
		t.Fatal("metrics lack the audit drop counter")
	}
}
