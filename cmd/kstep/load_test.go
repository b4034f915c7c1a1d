package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/loadgen"
)

func runLoad(args ...string) (string, error) {
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"load"}, args...))
	err := root.Execute()
	return out.String(), err
}

// Flags that do not go together are usage errors (exit 2), before any
// cluster is reached; a failed external start leaves no state behind.
func TestLoadFlags(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	missing := filepath.Join(tmp, "no-such-kubeconfig")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--provider", "external"}, "--kubeconfig is required"},
		{[]string{"--kubeconfig", missing, "--provider", "docker"}, `--provider "docker": kstep load runs no cluster`},
		{[]string{"--kubeconfig", missing, "--keep"}, "--keep goes with --provider external"},
		{[]string{"--kubeconfig", missing, "--context", "kind"}, "--context goes with --provider external"},
		{[]string{"--kubeconfig", missing, "--clean-timeout", "10s"}, "--clean-timeout goes with --provider external"},
		{[]string{"--kubeconfig", missing, "--provider", "external", "--clean-timeout", "0s"}, "--clean-timeout 0s: give a positive duration"},
		{[]string{"--kubeconfig", missing, "--provider", "external"}, "no-such-kubeconfig"},
	} {
		out, err := runLoad(tc.args...)
		if exitCode(err) != exitInvalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("kstep load %v: exit %d (%v), want %d naming %q\n%s", tc.args, exitCode(err), err, exitInvalid, tc.want, out)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "kstep-load-*")); len(left) > 0 {
		t.Errorf("a load that did not start left %v", left)
	}
}

// A load's objects carry one label per job name, a valid label value.
func TestLoadRunID(t *testing.T) {
	for name, want := range map[string]string{"load": "load-load", "chaos client": "load-chaos-client",
		strings.Repeat("x", 70): strings.Repeat("x", 63)} {
		if got := loadRunID(&loadgen.Job{Name: name}); got != want {
			t.Errorf("job %q: label %q, want %q", name, got, want)
		}
	}
}

// fakeCluster is the provider finish talks to: it records Down's context
// and Purge.
type fakeCluster struct {
	provider.Provider
	downErr     error
	downs       int
	downAlive   bool
	downTimeout time.Duration
	purges      int
}

func (f *fakeCluster) Down(ctx context.Context) error {
	f.downs++
	f.downAlive = ctx.Err() == nil
	if d, ok := ctx.Deadline(); ok {
		f.downTimeout = time.Until(d)
	}
	return f.downErr
}

func (f *fakeCluster) Purge() error { f.purges++; return nil }

// finish removes the load's objects (Down) on a context of its own, so a
// load ended by Ctrl-C still cleans up within --clean-timeout; --keep
// leaves them and names the clean command; a removal that fails says
// what removes the rest. The state directory goes every time.
func TestLoadFinish(t *testing.T) {
	newLoad := func(f *fakeCluster) *externalLoad {
		state := t.TempDir()
		return &externalLoad{p: f, state: state, kubeconfig: "/home/u/kind.kubeconfig", label: "load-nightly"}
	}
	interrupted, cancel := context.WithCancel(context.Background())
	cancel() // what signalContext does on Ctrl-C

	f := &fakeCluster{}
	l := newLoad(f)
	var log bytes.Buffer
	if err := l.finish(interrupted, false, 90*time.Second, &log); err != nil {
		t.Fatal(err)
	}
	if f.downs != 1 || !f.downAlive || f.downTimeout <= 80*time.Second || f.downTimeout > 90*time.Second {
		t.Errorf("after Ctrl-C: %d Downs, context alive %v, %s left; want one Down on a live context of at most 90s", f.downs, f.downAlive, f.downTimeout)
	}
	if _, err := os.Stat(l.state); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state %s left: %v", l.state, err)
	}

	f = &fakeCluster{}
	l = newLoad(f)
	log.Reset()
	if err := l.finish(context.Background(), true, time.Minute, &log); err != nil {
		t.Fatal(err)
	}
	if f.downs != 0 || f.purges != 1 || !strings.Contains(log.String(), "kstep clean --kubeconfig /home/u/kind.kubeconfig --run load-nightly removes them") {
		t.Errorf("--keep: %d Downs, %d Purges, log %q; want the objects kept, the credentials purged, the clean command named", f.downs, f.purges, log.String())
	}
	if _, err := os.Stat(l.state); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--keep: state %s left: %v", l.state, err)
	}

	broken := errors.New("clean kstep.dev/run=load-nightly: 3 objects still there")
	f = &fakeCluster{downErr: broken}
	err := newLoad(f).finish(context.Background(), false, time.Minute, io.Discard)
	if !errors.Is(err, broken) || !strings.Contains(err.Error(), "kstep clean --kubeconfig /home/u/kind.kubeconfig --run load-nightly removes what is left") {
		t.Errorf("a removal that failed: %v", err)
	}
}

// Credentials that may not create a namespace: kstep load --provider
// external exits 2 naming it, having sent the cluster nothing but its
// questions (discovery, SelfSubjectAccessReviews): the bench's preflight.
func TestLoadExternalPreflight(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/version":
			w.Write([]byte(`{"gitVersion":"v1.37.0-test"}`))
		case r.URL.Path == "/readyz" || r.URL.Path == "/healthz" || r.URL.Path == "/livez":
			w.Write([]byte("ok"))
		case r.Method == http.MethodPost && r.URL.Path == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews":
			// client-go sends protobuf; the answer may be JSON.
			body, _ := io.ReadAll(r.Body)
			obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
			rev, ok := obj.(*authorizationv1.SelfSubjectAccessReview)
			if err != nil || !ok {
				http.Error(w, fmt.Sprintf("decode %s: %v", r.Header.Get("Content-Type"), err), http.StatusBadRequest)
				return
			}
			a := rev.Spec.ResourceAttributes
			rev.Status.Allowed = !(a.Verb == "create" && a.Resource == "namespaces")
			rev.APIVersion, rev.Kind = "authorization.k8s.io/v1", "SelfSubjectAccessReview"
			json.NewEncoder(w).Encode(rev)
		default:
			http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":404}`, http.StatusNotFound)
		}
	}))
	defer srv.Close()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: srv.URL}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "ctx"
	if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", t.TempDir())
	out, err := runLoad("--provider", "external", "--kubeconfig", kc, "--count", "2")
	if exitCode(err) != exitInvalid || !strings.Contains(err.Error(), "create namespaces") || !strings.Contains(err.Error(), "(context ctx)") {
		t.Fatalf("exit %d (%v), want %d naming create namespaces and the context\n%s", exitCode(err), err, exitInvalid, out)
	}
	mu.Lock()
	defer mu.Unlock()
	reviews := 0
	for _, a := range asked {
		switch {
		case a == "POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews":
			reviews++
		case strings.HasPrefix(a, "GET "):
		default:
			t.Errorf("the refused load sent %s", a)
		}
	}
	if reviews == 0 {
		t.Errorf("no SelfSubjectAccessReview asked: %v", asked)
	}
}
