package openapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// fakeAPIServer is the smallest apiserver real kubectl can apply against:
// legacy discovery built from the same []Resource, our OpenAPI handler, and
// an in-memory store of deployments (GET, POST, strategic-merge PATCH).
type fakeAPIServer struct {
	*httptest.Server
	mu      sync.Mutex
	objects map[string][]byte
	log     []string // "METHOD path?query content-type"
}

func newFakeAPIServer(t *testing.T, resources []Resource) *fakeAPIServer {
	t.Helper()
	spec, err := New(resources)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeAPIServer{objects: map[string][]byte{}}
	lists := map[string]*metav1.APIResourceList{}
	var groups metav1.APIGroupList
	seenGroup := map[string]bool{}
	for _, r := range resources {
		gv := r.GVK.GroupVersion()
		prefix := "/apis/" + gv.String()
		if gv.Group == "" {
			prefix = "/api/v1"
		} else if !seenGroup[gv.Group] {
			seenGroup[gv.Group] = true
			v := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version}
			groups.Groups = append(groups.Groups, metav1.APIGroup{Name: gv.Group, Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v})
		}
		l := lists[prefix]
		if l == nil {
			l = &metav1.APIResourceList{GroupVersion: gv.String()}
			lists[prefix] = l
		}
		l.APIResources = append(l.APIResources, metav1.APIResource{Name: r.Plural, Namespaced: r.Namespaced, Kind: r.GVK.Kind, Verbs: r.Verbs})
		for _, s := range r.Subresources {
			kind := s.GVK.Kind
			if kind == "" {
				kind = r.GVK.Kind
			}
			l.APIResources = append(l.APIResources, metav1.APIResource{Name: r.Plural + "/" + s.Name, Namespaced: r.Namespaced,
				Group: s.GVK.Group, Version: s.GVK.Version, Kind: kind, Verbs: s.Verbs})
		}
	}
	writeJSON := func(w http.ResponseWriter, code int, v interface{}) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	notFound := func(w http.ResponseWriter, what string) {
		writeJSON(w, 404, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status: "Failure", Reason: metav1.StatusReasonNotFound, Code: 404, Message: what + " not found",
			Details: &metav1.StatusDetails{Name: filepath.Base(what), Kind: "deployments", Group: "apps"}})
	}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.log = append(f.log, fmt.Sprintf("%s %s?%s %s", r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type")))
		p := r.URL.Path
		switch {
		case strings.HasPrefix(p, "/openapi/"):
			spec.ServeHTTP(w, r)
		case p == "/api":
			writeJSON(w, 200, &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"},
				ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host}}})
		case p == "/apis":
			writeJSON(w, 200, &groups)
		case lists[p] != nil:
			writeJSON(w, 200, lists[p])
		case strings.HasPrefix(p, "/apis/apps/v1/namespaces/") && strings.Contains(p, "/deployments"):
			switch r.Method {
			case "GET":
				obj, ok := f.objects[p]
				if !ok {
					notFound(w, p)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(obj)
			case "POST":
				var d appsv1.Deployment
				if err := json.Unmarshal(body, &d); err != nil {
					writeJSON(w, 400, &metav1.Status{Status: "Failure", Code: 400, Message: err.Error()})
					return
				}
				d.ResourceVersion = "1"
				out, _ := json.Marshal(&d)
				f.objects[p+"/"+d.Name] = out
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(201)
				_, _ = w.Write(out)
			case "PATCH":
				cur, ok := f.objects[p]
				if !ok {
					notFound(w, p)
					return
				}
				if r.Header.Get("Content-Type") != "application/strategic-merge-patch+json" {
					writeJSON(w, 415, &metav1.Status{Status: "Failure", Code: 415, Message: "test server only does strategic merge patch"})
					return
				}
				out, err := strategicpatch.StrategicMergePatch(cur, body, &appsv1.Deployment{})
				if err != nil {
					writeJSON(w, 422, &metav1.Status{Status: "Failure", Code: 422, Message: err.Error()})
					return
				}
				f.objects[p] = out
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(out)
			default:
				w.WriteHeader(405)
			}
		default:
			notFound(w, p)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAPIServer) takeLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.log
	f.log = nil
	return l
}

func kubectlBinary(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not installed")
	}
	return path
}

func runKubectl(t *testing.T, bin, kubeconfig, cacheDir string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args = append([]string{"--kubeconfig", kubeconfig, "--cache-dir", cacheDir}, args...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+filepath.Dir(kubeconfig))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// TestRealKubectl runs the installed kubectl against a fake apiserver that
// serves these documents: apply without --validate=false must create with
// fieldValidation=Strict, then update with a strategic merge patch computed
// from the v3 schema, never needing /openapi/v2; explain must work with
// both the v3 and the v2 templates.
func TestRealKubectl(t *testing.T) {
	bin := kubectlBinary(t)
	if testing.Short() {
		t.Skip("runs kubectl")
	}
	srv := newFakeAPIServer(t, testResources())
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster: {server: %q}
contexts:
- name: fake
  context: {cluster: fake, user: fake, namespace: default}
current-context: fake
users:
- name: fake
  user: {token: test}
`, srv.URL)
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cacheDir := filepath.Join(dir, "cache")
	manifest := func(image string) string {
		m := filepath.Join(dir, "deploy.yaml")
		y := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 25%, maxUnavailable: 1}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: ` + image + `
        ports: [{containerPort: 80}]
        resources:
          limits: {cpu: 500m, memory: 64Mi}
      - name: sidecar
        image: busybox
`
		if err := os.WriteFile(m, []byte(y), 0o600); err != nil {
			t.Fatal(err)
		}
		return m
	}

	// 1. Create.
	out, errOut, err := runKubectl(t, bin, kubeconfig, cacheDir, "apply", "-f", manifest("nginx:1"))
	if err != nil {
		t.Fatalf("kubectl apply (create): %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	log := srv.takeLog()
	t.Logf("kubectl apply (create) requests:\n%s", strings.Join(log, "\n"))
	post := findRequest(log, "POST /apis/apps/v1/namespaces/default/deployments?")
	if post == "" || !strings.Contains(post, "fieldValidation=Strict") {
		t.Errorf("create was not sent with fieldValidation=Strict:\n%s", strings.Join(log, "\n"))
	}
	if findRequest(log, "GET /openapi/v2") != "" {
		t.Errorf("kubectl fell back to /openapi/v2:\n%s", strings.Join(log, "\n"))
	}
	if strings.Contains(errOut, "warning") || strings.Contains(errOut, "error") {
		t.Errorf("kubectl apply stderr: %s", errOut)
	}

	// 2. Update: a strategic merge patch from the v3 schema.
	out, errOut, err = runKubectl(t, bin, kubeconfig, cacheDir, "apply", "-f", manifest("nginx:2"))
	if err != nil {
		t.Fatalf("kubectl apply (update): %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	log = srv.takeLog()
	t.Logf("kubectl apply (update) requests:\n%s", strings.Join(log, "\n"))
	patch := findRequest(log, "PATCH /apis/apps/v1/namespaces/default/deployments/web?")
	if patch == "" || !strings.Contains(patch, "fieldValidation=Strict") || !strings.HasSuffix(patch, "application/strategic-merge-patch+json") {
		t.Errorf("update was not a strategic merge patch with fieldValidation=Strict:\n%s", strings.Join(log, "\n"))
	}
	if strings.Contains(errOut, "warning") {
		t.Errorf("kubectl apply stderr: %s", errOut)
	}
	srv.mu.Lock()
	stored := string(srv.objects["/apis/apps/v1/namespaces/default/deployments/web"])
	srv.mu.Unlock()
	if !strings.Contains(stored, `"image":"nginx:2"`) || !strings.Contains(stored, `"name":"sidecar"`) {
		t.Errorf("patched object: %s", stored)
	}

	// 3. explain, v3 templates (the default) and v2.
	out, errOut, err = runKubectl(t, bin, kubeconfig, cacheDir, "explain", "deployments.spec.template.spec.containers")
	if err != nil {
		t.Fatalf("kubectl explain: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	for _, want := range []string{"GROUP:      apps", "KIND:       Deployment", "FIELD: containers <[]Container>", "image\t<string>", "resources\t<ResourceRequirements>"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl explain output lacks %q:\n%s", want, out)
		}
	}
	out, errOut, err = runKubectl(t, bin, kubeconfig, cacheDir, "explain", "pods.spec", "--output=plaintext-openapiv2")
	if err != nil {
		t.Fatalf("kubectl explain (v2): %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	if !strings.Contains(out, "containers\t<[]Object>") && !strings.Contains(out, "containers\t<[]Container>") {
		t.Errorf("kubectl explain (v2) output:\n%s", out)
	}
	out, errOut, err = runKubectl(t, bin, kubeconfig, cacheDir, "explain", "deployments", "--recursive")
	if err != nil || !strings.Contains(out, "maxSurge") {
		t.Errorf("kubectl explain --recursive: %v\n%s\n%s", err, errOut, out[:min(len(out), 2000)])
	}
	t.Logf("requests of the last commands:\n%s", strings.Join(dedupe(srv.takeLog()), "\n"))
}

func findRequest(log []string, prefix string) string {
	for _, l := range log {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func dedupe(l []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range l {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
