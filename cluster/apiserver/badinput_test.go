package apiserver_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Every bad input gets a metav1.Status with its code and reason, and
// nothing reaches etcd.
func TestBadInput(t *testing.T) {
	e := newEnv(t)
	big := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"k":"` + strings.Repeat("x", 2<<20) + `"}}`
	rsBad := `{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"bad"},"spec":{"selector":{"matchLabels":{"app":"a"}},
		"template":{"metadata":{"labels":{"app":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`
	cases := []struct {
		name, method, path, ctype, body string
		code                            int32
		reason                          metav1.StatusReason
		noKeys                          string
	}{
		{"malformed json", "POST", "/api/v1/namespaces/default/pods", "application/json", `{"metadata":`, 400, metav1.StatusReasonBadRequest, "/registry/pods/"},
		{"malformed yaml", "POST", "/api/v1/namespaces/default/pods", "application/yaml", "metadata: [\n  name: x", 400, metav1.StatusReasonBadRequest, "/registry/pods/"},
		{"unknown resource", "POST", "/api/v1/namespaces/default/widgets", "application/json", `{}`, 404, metav1.StatusReasonNotFound, "/registry/widgets/"},
		{"unknown group", "GET", "/apis/nope.io/v1/things", "", "", 404, metav1.StatusReasonNotFound, ""},
		{"wrong content type", "POST", "/api/v1/namespaces/default/pods", "text/plain", `name: x`, 415, metav1.StatusReasonUnsupportedMediaType, "/registry/pods/"},
		{"garbage protobuf", "POST", "/api/v1/namespaces/default/pods", "application/vnd.kubernetes.protobuf", "k8s\x00\x0a\xff\xff", 400, metav1.StatusReasonBadRequest, "/registry/pods/"},
		{"cbor body", "POST", "/api/v1/namespaces/default/pods", "application/cbor", "\xa0", 415, metav1.StatusReasonUnsupportedMediaType, "/registry/pods/"},
		{"invalid name", "POST", "/api/v1/namespaces/default/pods", "application/json",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"Bad_Name"},"spec":{"containers":[{"name":"c","image":"i"}]}}`, 422, metav1.StatusReasonInvalid, "/registry/pods/"},
		{"missing containers", "POST", "/api/v1/namespaces/default/pods", "application/json",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{}}`, 422, metav1.StatusReasonInvalid, "/registry/pods/"},
		{"selector does not match template", "POST", "/apis/apps/v1/namespaces/default/replicasets", "application/json", rsBad, 422, metav1.StatusReasonInvalid, "/registry/replicasets/"},
		{"kind mismatch", "POST", "/api/v1/namespaces/default/pods", "application/json",
			`{"apiVersion":"v1","kind":"Service","metadata":{"name":"p"}}`, 400, metav1.StatusReasonBadRequest, "/registry/pods/"},
		{"namespace mismatch", "POST", "/api/v1/namespaces/default/configmaps", "application/json",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"other"}}`, 400, metav1.StatusReasonBadRequest, "/registry/configmaps/"},
		{"too large", "POST", "/api/v1/namespaces/default/configmaps", "application/json", big, 413, metav1.StatusReasonRequestEntityTooLarge, "/registry/configmaps/"},
		{"strict unknown field", "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict", "application/json",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"bogus":1}`, 400, metav1.StatusReasonBadRequest, "/registry/configmaps/"},
		{"deeply nested", "POST", "/api/v1/namespaces/default/configmaps", "application/json",
			strings.Repeat("[", 20000) + strings.Repeat("]", 20000), 400, metav1.StatusReasonBadRequest, "/registry/configmaps/"},
		{"bad label selector", "GET", "/api/v1/pods?labelSelector=a%3D%3D%3Db", "", "", 400, metav1.StatusReasonBadRequest, ""},
		{"bad resourceVersion", "GET", "/api/v1/pods?resourceVersion=abc", "", "", 400, metav1.StatusReasonBadRequest, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, e.api.URL+tc.path, bytes.NewBufferString(tc.body))
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if int32(resp.StatusCode) != tc.code {
				t.Fatalf("HTTP %d, want %d: %s", resp.StatusCode, tc.code, body)
			}
			s := statusOf(t, body)
			if s.Code != tc.code || s.Reason != tc.reason || s.Kind != "Status" {
				t.Errorf("status = %d %q kind %q, want %d %q: %s", s.Code, s.Reason, s.Kind, tc.code, tc.reason, s.Message)
			}
			if tc.noKeys != "" {
				if keys := e.etcdKeys(tc.noKeys); len(keys) != 0 {
					t.Errorf("etcd holds %v after a refused write", keys)
				}
			}
		})
	}
}

// Immutable fields are refused on update with 422, and the stored object
// stays as it was.
func TestImmutableFields(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	rs, err := e.cs.AppsV1().ReplicaSets("default").Create(ctx, testRS("imm", 1), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := e.etcd.Get(ctx, "/registry/replicasets/default/imm")
	rs.Spec.Selector.MatchLabels = map[string]string{"app": "other"}
	rs.Spec.Template.Labels = map[string]string{"app": "other"}
	_, err = e.cs.AppsV1().ReplicaSets("default").Update(ctx, rs, metav1.UpdateOptions{})
	if s := statusFromErr(err); s == nil || s.Code != 422 {
		t.Fatalf("selector change: want 422, got %v", err)
	}
	after, _ := e.etcd.Get(ctx, "/registry/replicasets/default/imm")
	if after.Kvs[0].ModRevision != before.Kvs[0].ModRevision {
		t.Fatal("a refused update was written")
	}
	p, err := e.cs.CoreV1().Pods("default").Create(ctx, testPod("imm"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.Containers[0].Name = "renamed"
	_, err = e.cs.CoreV1().Pods("default").Update(ctx, p, metav1.UpdateOptions{})
	if s := statusFromErr(err); s == nil || s.Code != 422 || !strings.Contains(s.Message, "pod updates may not change fields") {
		t.Fatalf("pod spec change: want 422 'pod updates may not change fields', got %v", err)
	}
}

func statusFromErr(err error) *metav1.Status {
	type apiStatus interface{ Status() metav1.Status }
	if s, ok := err.(apiStatus); ok {
		st := s.Status()
		return &st
	}
	return nil
}
