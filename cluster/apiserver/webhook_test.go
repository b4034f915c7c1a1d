package apiserver_test

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// webhookServer is a real HTTPS admission webhook: /mutate labels pods
// mutated=yes, /deny refuses pods labelled deny=true, /hang never answers
// (until the caller gives up).
func webhookServer(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		var pod corev1.Pod
		_ = json.Unmarshal(review.Request.Object.Raw, &pod)
		switch r.URL.Path {
		case "/mutate":
			pt := admissionv1.PatchTypeJSONPatch
			resp.PatchType, resp.Patch = &pt, []byte(`[{"op":"add","path":"/metadata/labels/mutated","value":"yes"}]`)
		case "/deny":
			if pod.Labels["deny"] == "true" {
				resp.Allowed, resp.Result = false, &metav1.Status{Code: http.StatusForbidden, Message: "no deny pods"}
			}
		case "/hang":
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		review.Response, review.Request = resp, nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(review)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return srv, base64.StdEncoding.EncodeToString(ca)
}

func webhookYAML(kind, name, url, caBundle, policy string, timeout int, ns string) string {
	return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: %s
metadata: {name: %s}
webhooks:
- name: %s.kstep.test
  clientConfig: {url: %q, caBundle: %s}
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: %s}}
  objectSelector: {matchExpressions: [{key: skip, operator: DoesNotExist}]}
  failurePolicy: %s
  timeoutSeconds: %d
  sideEffects: None
  admissionReviewVersions: [v1]
`, kind, name, name, url, caBundle, ns, policy, timeout)
}

// Webhooks configured with kubectl are called over HTTPS with the caBundle;
// rules and selectors pick the writes; a mutating webhook's JSON patch is
// applied; a validating webhook's refusal is the client's error.
func TestWebhooks(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	srv, ca := webhookServer(t)
	k := e.kubectl(t)
	for _, ns := range []string{"hooked", "hang-fail", "hang-ignore"} {
		e.namespace(t, ns)
	}
	manifests := webhookYAML("MutatingWebhookConfiguration", "mutate", srv.URL+"/mutate", ca, "Fail", 5, "hooked") + "---\n" +
		webhookYAML("ValidatingWebhookConfiguration", "deny", srv.URL+"/deny", ca, "Fail", 5, "hooked")
	if out, err := k(manifests, "apply", "-f", "-"); err != nil {
		t.Fatalf("kubectl apply webhooks: %v\n%s", err, out)
	}
	testWaitCached(t, e, "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations")
	testWaitCached(t, e, "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations")

	p, err := e.cs.CoreV1().Pods("hooked").Create(ctx, testPod("m"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Labels["mutated"] != "yes" {
		t.Fatalf("labels %v: the mutating webhook's patch was not applied", p.Labels)
	}
	// Outside the namespaceSelector, or excluded by the objectSelector: no call.
	if p, err = e.cs.CoreV1().Pods("default").Create(ctx, testPod("m"), metav1.CreateOptions{}); err != nil || p.Labels["mutated"] != "" {
		t.Fatalf("default namespace: labels %v err %v, want no webhook", p.Labels, err)
	}
	skip := testPod("skip")
	skip.Labels["skip"], skip.Labels["deny"] = "1", "true"
	if p, err = e.cs.CoreV1().Pods("hooked").Create(ctx, skip, metav1.CreateOptions{}); err != nil || p.Labels["mutated"] != "" {
		t.Fatalf("objectSelector excluded: labels %v err %v, want no webhook", p.Labels, err)
	}

	deny := testPod("deny")
	deny.Labels["deny"] = "true"
	_, err = e.cs.CoreV1().Pods("hooked").Create(ctx, deny, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `admission webhook "deny.kstep.test" denied the request: no deny pods`) {
		t.Fatalf("denied pod: want 403 from the webhook, got %v", err)
	}
	out, err := k(`apiVersion: v1
kind: Pod
metadata: {name: kdeny, namespace: hooked, labels: {deny: "true"}}
spec: {containers: [{name: app, image: registry.kstep.local/app:v1}]}
`, "create", "-f", "-")
	if err == nil || !strings.Contains(out, "denied the request: no deny pods") {
		t.Fatalf("kubectl create of a denied pod: %v\n%s", err, out)
	}
	if keys := e.etcdKeys("/registry/pods/hooked/"); len(keys) != 2 {
		t.Fatalf("etcd holds %v, want m and skip only", keys)
	}
}

// A webhook that never answers: with failurePolicy Fail the write fails
// once timeoutSeconds pass, with Ignore it succeeds; neither waits for the
// default 10 s timeout, let alone forever.
func TestHangingWebhook(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	srv, ca := webhookServer(t)
	for _, ns := range []string{"hang-fail", "hang-ignore"} {
		e.namespace(t, ns)
	}
	k := e.kubectl(t)
	manifests := webhookYAML("ValidatingWebhookConfiguration", "hang-fail", srv.URL+"/hang", ca, "Fail", 1, "hang-fail") + "---\n" +
		webhookYAML("MutatingWebhookConfiguration", "hang-ignore", srv.URL+"/hang", ca, "Ignore", 1, "hang-ignore")
	if out, err := k(manifests, "apply", "-f", "-"); err != nil {
		t.Fatalf("kubectl apply webhooks: %v\n%s", err, out)
	}
	testWaitCached(t, e, "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations")
	testWaitCached(t, e, "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations")

	start := time.Now()
	_, err := e.cs.CoreV1().Pods("hang-fail").Create(ctx, testPod("p"), metav1.CreateOptions{})
	failed := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), `failed calling webhook "hang-fail.kstep.test"`) {
		t.Fatalf("Fail policy: want the write to fail calling the webhook, got %v", err)
	}
	if failed < time.Second || failed > 8*time.Second {
		t.Fatalf("Fail policy: the write failed after %v; want after the 1s timeout, well before 10s", failed)
	}
	if keys := e.etcdKeys("/registry/pods/hang-fail/"); len(keys) != 0 {
		t.Fatalf("etcd holds %v after a failed webhook", keys)
	}

	start = time.Now()
	p, err := e.cs.CoreV1().Pods("hang-ignore").Create(ctx, testPod("p"), metav1.CreateOptions{})
	ignored := time.Since(start)
	if err != nil {
		t.Fatalf("Ignore policy: want the write to succeed, got %v", err)
	}
	if ignored > 8*time.Second || p.Labels["mutated"] != "" {
		t.Fatalf("Ignore policy: took %v (labels %v); want the 1s timeout plus a margin", ignored, p.Labels)
	}
	t.Logf("hanging webhook, timeoutSeconds=1: Fail refused after %v, Ignore admitted after %v", failed.Round(time.Millisecond), ignored.Round(time.Millisecond))

	// Out of the hooked namespaces writes never wait.
	start = time.Now()
	if _, err := e.cs.CoreV1().Pods("default").Create(ctx, testPod("fast"), metav1.CreateOptions{}); err != nil || time.Since(start) > 900*time.Millisecond {
		t.Fatalf("unhooked namespace: %v after %v", err, time.Since(start))
	}
}
