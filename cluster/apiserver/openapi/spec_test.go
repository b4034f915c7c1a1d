package openapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/openapi/cached"
	"k8s.io/client-go/openapi3"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/util/proto"
	protovalidation "k8s.io/kube-openapi/pkg/util/proto/validation"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"
)

var (
	rsGVK     = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}
	deployGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	nsGVK     = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	podGVK    = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
)

var testSpec = sync.OnceValues(func() (*Spec, error) { return New(testResources()) })

func mustSpec(t testing.TB) *Spec {
	t.Helper()
	s, err := testSpec()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// countingServer serves the spec and counts requests per path.
type countingServer struct {
	*httptest.Server
	mu    sync.Mutex
	count map[string]int
	total atomic.Int64
}

func newServer(t *testing.T) *countingServer {
	t.Helper()
	s := mustSpec(t)
	cs := &countingServer{count: map[string]int{}}
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs.mu.Lock()
		cs.count[r.URL.Path]++
		cs.mu.Unlock()
		cs.total.Add(1)
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(cs.Close)
	return cs
}

func (cs *countingServer) requests(path string) int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.count[path]
}

func discoveryFor(t *testing.T, url string) *discovery.DiscoveryClient {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: url})
	if err != nil {
		t.Fatal(err)
	}
	return dc
}

// ---- kubectl's checks, copied from k8s.io/cli-runtime@v0.32.4 and
// k8s.io/kubectl@v0.32.4 (which this module cannot import). ----

// supportsQueryParamV3 is cli-runtime's query_param_verifier_v3.go: the
// first PATCH operation whose x-kubernetes-group-version-kind is gvk must
// list the query parameter.
func supportsQueryParamV3(doc *spec3.OpenAPI, gvk schema.GroupVersionKind, queryParam string) error {
	if doc == nil || doc.Paths == nil {
		return errors.New("invalid OpenAPI V3 document")
	}
	for _, path := range doc.Paths.Paths {
		if path == nil || path.PathProps.Patch == nil {
			continue
		}
		op := path.PathProps.Patch
		if !gvkMatchesSingle(gvk, op.VendorExtensible.Extensions) {
			continue
		}
		for _, param := range op.OperationProps.Parameters {
			if param.ParameterProps.Name == queryParam && param.In == "query" {
				return nil
			}
		}
		return errors.New("param unsupported")
	}
	return errors.New("path not found for GVK")
}

func gvkMatchesSingle(gvk schema.GroupVersionKind, ext spec.Extensions) bool {
	var m map[string]string
	if err := ext.GetObject("x-kubernetes-group-version-kind", &m); err != nil {
		return false
	}
	return m["group"] == gvk.Group && m["version"] == gvk.Version && m["kind"] == gvk.Kind
}

func gvkMatchesArray(gvk schema.GroupVersionKind, ext spec.Extensions) bool {
	var list []map[string]string
	if err := ext.GetObject("x-kubernetes-group-version-kind", &list); err != nil {
		return false
	}
	for _, m := range list {
		if m["group"] == gvk.Group && m["version"] == gvk.Version && m["kind"] == gvk.Kind {
			return true
		}
	}
	return false
}

// gvkSupportsPatchOpenAPIV3 is kubectl apply's patcher check.
func gvkSupportsPatchOpenAPIV3(doc *spec3.OpenAPI, gvk schema.GroupVersionKind) bool {
	for _, path := range doc.Paths.Paths {
		if path.Patch != nil && gvkMatchesSingle(gvk, path.Patch.Extensions) {
			if path.Patch.RequestBody == nil || path.Patch.RequestBody.Content == nil {
				return false
			}
			_, ok := path.Patch.RequestBody.Content["application/strategic-merge-patch+json"]
			return ok
		}
	}
	return false
}

// supportsQueryParamV2 is cli-runtime's query_param_verifier.go.
func supportsQueryParamV2(doc *openapi_v2.Document, gvk schema.GroupVersionKind, queryParam string) bool {
	for _, path := range doc.GetPaths().GetPath() {
		patch := path.GetValue().GetPatch()
		if !hasGVKExtensionV2(patch.GetVendorExtension(), gvk) {
			continue
		}
		for _, param := range patch.GetParameters() {
			if param.GetParameter().GetNonBodyParameter().GetQueryParameterSubSchema().GetName() == queryParam {
				return true
			}
		}
		return false
	}
	return false
}

func hasGVKExtensionV2(exts []*openapi_v2.NamedAny, gvk schema.GroupVersionKind) bool {
	for _, e := range exts {
		if e.GetName() != "x-kubernetes-group-version-kind" {
			continue
		}
		var v map[string]string
		if err := yaml.Unmarshal([]byte(e.GetValue().GetYaml()), &v); err != nil {
			continue
		}
		return v["group"] == gvk.Group && v["kind"] == gvk.Kind && v["version"] == gvk.Version
	}
	return false
}

// getConsumesV2 is kubectl's util/openapi document.GetConsumes for PATCH.
func getConsumesV2(doc *openapi_v2.Document, gvk schema.GroupVersionKind) []string {
	for _, path := range doc.GetPaths().GetPath() {
		if hasGVKExtensionV2(path.GetValue().GetPatch().GetVendorExtension(), gvk) {
			return path.GetValue().GetPatch().GetConsumes()
		}
	}
	return nil
}

// lookupResourceV2 is kubectl's util/openapi NewOpenAPIData + LookupResource.
func lookupResourceV2(t *testing.T, models proto.Models, gvk schema.GroupVersionKind) proto.Schema {
	t.Helper()
	for _, name := range models.ListModels() {
		m := models.LookupModel(name)
		list, _ := m.GetExtensions()["x-kubernetes-group-version-kind"].([]interface{})
		for _, item := range list {
			mm, ok := item.(map[interface{}]interface{})
			if !ok {
				continue
			}
			if mm["group"] == gvk.Group && mm["version"] == gvk.Version && mm["kind"] == gvk.Kind {
				return m
			}
		}
	}
	t.Fatalf("no v2 model with GVK %v", gvk)
	return nil
}

// ---- tests ----

// The v2 protobuf, fetched the way client-go discovery OpenAPISchema()
// does, parses with gnostic and with kubectl's proto models, carries GVKs,
// and drives kubectl's legacy verifier, patch-type lookup and client-side
// validation.
func TestOpenAPIV2Protobuf(t *testing.T) {
	srv := newServer(t)
	doc, err := discoveryFor(t, srv.URL).OpenAPISchema()
	if err != nil {
		t.Fatalf("OpenAPISchema: %v", err)
	}
	if doc.GetSwagger() != "2.0" {
		t.Errorf("swagger = %q", doc.GetSwagger())
	}
	var rs *openapi_v2.Schema
	for _, d := range doc.GetDefinitions().GetAdditionalProperties() {
		if d.GetName() == "io.k8s.api.apps.v1.ReplicaSet" {
			rs = d.GetValue()
		}
	}
	if rs == nil {
		t.Fatal("definition io.k8s.api.apps.v1.ReplicaSet missing")
	}
	exts := proto.VendorExtensionToMap(rs.GetVendorExtension())
	gvks, _ := exts["x-kubernetes-group-version-kind"].([]interface{})
	if len(gvks) != 1 {
		t.Fatalf("ReplicaSet GVK extension = %#v", exts)
	}
	if m := gvks[0].(map[interface{}]interface{}); m["group"] != "apps" || m["version"] != "v1" || m["kind"] != "ReplicaSet" {
		t.Errorf("ReplicaSet GVK = %#v", m)
	}

	for _, gvk := range []schema.GroupVersionKind{rsGVK, deployGVK, nsGVK, podGVK} {
		if !supportsQueryParamV2(doc, gvk, "fieldValidation") {
			t.Errorf("v2: PATCH of %v lacks fieldValidation", gvk)
		}
		consumes := getConsumesV2(doc, gvk)
		if !contains(consumes, "application/strategic-merge-patch+json") {
			t.Errorf("v2: PATCH of %v consumes %v", gvk, consumes)
		}
	}

	models, err := proto.NewOpenAPIData(doc)
	if err != nil {
		t.Fatalf("kubectl's proto.NewOpenAPIData: %v", err)
	}
	deploy := lookupResourceV2(t, models, deployGVK)

	// kubectl's client-side validation (used only if a server lacks
	// fieldValidation) accepts a valid object and rejects an unknown field.
	valid := map[string]interface{}{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]interface{}{"name": "web", "labels": map[string]interface{}{"app": "web"}},
		"spec": map[string]interface{}{
			"replicas": int64(2),
			"selector": map[string]interface{}{"matchLabels": map[string]interface{}{"app": "web"}},
			"template": map[string]interface{}{
				"metadata": map[string]interface{}{"labels": map[string]interface{}{"app": "web"}},
				"spec": map[string]interface{}{"containers": []interface{}{map[string]interface{}{
					"name": "web", "image": "nginx",
					"ports":     []interface{}{map[string]interface{}{"containerPort": int64(80)}},
					"resources": map[string]interface{}{"limits": map[string]interface{}{"cpu": "500m", "memory": int64(1 << 20)}},
				}}},
			},
			"strategy": map[string]interface{}{"rollingUpdate": map[string]interface{}{"maxSurge": "25%", "maxUnavailable": int64(1)}},
		},
	}
	if errs := protovalidation.ValidateModel(valid, deploy, "Deployment"); len(errs) > 0 {
		t.Errorf("valid Deployment rejected: %v", errs)
	}
	valid["spec"].(map[string]interface{})["replicaz"] = int64(1)
	if errs := protovalidation.ValidateModel(valid, deploy, "Deployment"); len(errs) == 0 {
		t.Error("unknown field spec.replicaz accepted")
	}
}

// The OpenAPI v3 root finds the apps/v1 spec and, as kubectl's field
// validation verifier does, the fieldValidation parameter on PATCH.
func TestOpenAPIV3RootFieldValidation(t *testing.T) {
	srv := newServer(t)
	root := openapi3.NewRoot(openapi.NewClient(discoveryFor(t, srv.URL).RESTClient()))

	gvs, err := root.GroupVersions()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []schema.GroupVersion{{Version: "v1"}, {Group: "apps", Version: "v1"}, {Group: "rbac.authorization.k8s.io", Version: "v1"}} {
		found := false
		for _, gv := range gvs {
			found = found || gv == want
		}
		if !found {
			t.Errorf("GroupVersions() = %v, missing %v", gvs, want)
		}
	}

	apps, err := root.GVSpec(schema.GroupVersion{Group: "apps", Version: "v1"})
	if err != nil {
		t.Fatalf("GVSpec(apps/v1): %v", err)
	}
	if err := supportsQueryParamV3(apps, rsGVK, "fieldValidation"); err != nil {
		t.Errorf("apps/v1 ReplicaSet: %v", err)
	}
	if !gvkSupportsPatchOpenAPIV3(apps, rsGVK) {
		t.Error("apps/v1 ReplicaSet PATCH lacks strategic merge patch")
	}
	// Namespace is kubectl's stand-in for CRDs.
	core, err := root.GVSpec(schema.GroupVersion{Version: "v1"})
	if err != nil {
		t.Fatalf("GVSpec(v1): %v", err)
	}
	for _, gvk := range []schema.GroupVersionKind{nsGVK, podGVK} {
		if err := supportsQueryParamV3(core, gvk, "fieldValidation"); err != nil {
			t.Errorf("%v: %v", gvk, err)
		}
	}

	// The PATCH operation of replicasets, found by path.
	item := apps.Paths.Paths["/apis/apps/v1/namespaces/{namespace}/replicasets/{name}"]
	if item == nil || item.Patch == nil {
		t.Fatal("PATCH /apis/apps/v1/namespaces/{namespace}/replicasets/{name} missing")
	}
	var names []string
	for _, p := range item.Patch.Parameters {
		names = append(names, p.In+":"+p.Name)
	}
	for _, want := range []string{"query:fieldValidation", "query:fieldManager", "query:dryRun", "query:force"} {
		if !contains(names, want) {
			t.Errorf("PATCH parameters %v lack %s", names, want)
		}
	}

	var nf *openapi3.GroupVersionNotFoundError
	if _, err := root.GVSpec(schema.GroupVersion{Group: "nope.example.com", Version: "v1"}); !errors.As(err, &nf) {
		t.Errorf("GVSpec(unknown) error = %v, want GroupVersionNotFoundError", err)
	}
}

// kubectl explain (v3) uses the memory-cached client: Paths(), then the GV
// document as JSON, finds the kind's schema by its GVK list and follows
// $ref/allOf down a field path.
func TestCachedClientExplain(t *testing.T) {
	srv := newServer(t)
	client := cached.NewClient(openapi.NewClient(discoveryFor(t, srv.URL).RESTClient()))
	paths, err := client.Paths()
	if err != nil {
		t.Fatal(err)
	}
	gv, ok := paths["apis/apps/v1"]
	if !ok {
		t.Fatalf("Paths() has no apis/apps/v1: %v", keys(paths))
	}
	if !strings.HasPrefix(gv.ServerRelativeURL(), "/openapi/v3/apis/apps/v1?hash=") {
		t.Errorf("ServerRelativeURL = %q", gv.ServerRelativeURL())
	}
	data, err := gv.Schema("application/json")
	if err != nil {
		t.Fatal(err)
	}
	before := srv.requests("/openapi/v3/apis/apps/v1")
	if _, err := gv.Schema("application/json"); err != nil {
		t.Fatal(err)
	}
	if after := srv.requests("/openapi/v3/apis/apps/v1"); after != before {
		t.Errorf("cached client fetched the document again (%d -> %d requests)", before, after)
	}

	var doc map[string]interface{}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	// explain's template: the GVK of the resource comes from its operations.
	item := doc["paths"].(map[string]interface{})["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"].(map[string]interface{})
	opGVK := item["get"].(map[string]interface{})["x-kubernetes-group-version-kind"].(map[string]interface{})
	if opGVK["kind"] != "Deployment" || opGVK["group"] != "apps" || opGVK["version"] != "v1" {
		t.Fatalf("GET deployment GVK = %v", opGVK)
	}
	schemas := doc["components"].(map[string]interface{})["schemas"].(map[string]interface{})
	var deploy map[string]interface{}
	for _, s := range schemas {
		sm := s.(map[string]interface{})
		list, _ := sm["x-kubernetes-group-version-kind"].([]interface{})
		for _, g := range list {
			if g.(map[string]interface{})["kind"] == "Deployment" && g.(map[string]interface{})["group"] == "apps" {
				deploy = sm
			}
		}
	}
	if deploy == nil {
		t.Fatal("no schema with GVK apps/v1 Deployment")
	}
	if deploy["description"] == "" || deploy["description"] == nil {
		t.Error("Deployment has no description")
	}
	resolve := func(s map[string]interface{}) map[string]interface{} {
		for {
			if all, ok := s["allOf"].([]interface{}); ok && len(all) > 0 {
				s = all[0].(map[string]interface{})
				continue
			}
			if ref, ok := s["$ref"].(string); ok {
				name := strings.TrimPrefix(ref, "#/components/schemas/")
				next, ok := schemas[name].(map[string]interface{})
				if !ok {
					t.Fatalf("dangling $ref %s", ref)
				}
				s = next
				continue
			}
			return s
		}
	}
	cur := deploy
	for _, f := range []string{"spec", "template", "spec", "containers", "resources", "limits"} {
		cur = resolve(cur)
		if items, ok := cur["items"].(map[string]interface{}); ok {
			cur = resolve(items)
		}
		props, _ := cur["properties"].(map[string]interface{})
		next, ok := props[f].(map[string]interface{})
		if !ok {
			t.Fatalf("field %q missing", f)
		}
		cur = next
	}
	if cur["type"] != "object" || cur["additionalProperties"] == nil {
		t.Errorf("resources.limits = %v, want a map", cur)
	}
}

// kubectl apply computes a strategic merge patch from the v3 schema
// (and, failing that, from v2). Both must give the patch the Go types give.
func TestStrategicMergePatchFromSchemas(t *testing.T) {
	srv := newServer(t)
	dc := discoveryFor(t, srv.URL)
	root := openapi3.NewRoot(openapi.NewClient(dc.RESTClient()))
	apps, err := root.GVSpec(schema.GroupVersion{Group: "apps", Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if !gvkSupportsPatchOpenAPIV3(apps, deployGVK) {
		t.Fatal("Deployment PATCH lacks strategic merge patch")
	}
	var v3Schema *spec.Schema
	for _, s := range apps.Components.Schemas {
		if gvkMatchesArray(deployGVK, s.Extensions) {
			v3Schema = s
		}
	}
	if v3Schema == nil {
		t.Fatal("no v3 schema for Deployment")
	}

	original := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"template":{"spec":{"containers":[{"name":"a","image":"a:1"},{"name":"b","image":"b:1"}],"volumes":[{"name":"v","emptyDir":{}}]}},"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}}}}`)
	modified := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"template":{"spec":{"containers":[{"name":"b","image":"b:2"}],"volumes":[{"name":"v","emptyDir":{}}]}},"strategy":{"type":"Recreate"}}}`)
	current := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","resourceVersion":"7"},"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"a","image":"a:1","imagePullPolicy":"Always"},{"name":"b","image":"b:1","imagePullPolicy":"Always"}],"volumes":[{"name":"v","emptyDir":{}}]}},"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}}}}`)

	structMeta, err := strategicpatch.NewPatchMetaFromStruct(&appsv1.Deployment{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := strategicpatch.CreateThreeWayMergePatch(original, modified, current, structMeta, true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(want), "$setElementOrder/containers") || !strings.Contains(string(want), "retainKeys") {
		t.Fatalf("reference patch lacks merge semantics: %s", want)
	}

	gotV3, err := strategicpatch.CreateThreeWayMergePatch(original, modified, current,
		strategicpatch.PatchMetaFromOpenAPIV3{Schema: v3Schema, SchemaList: apps.Components.Schemas}, true)
	if err != nil {
		t.Fatalf("v3 patch: %v", err)
	}
	assertJSONEqual(t, "v3 patch", gotV3, want)

	doc, err := dc.OpenAPISchema()
	if err != nil {
		t.Fatal(err)
	}
	models, err := proto.NewOpenAPIData(doc)
	if err != nil {
		t.Fatal(err)
	}
	gotV2, err := strategicpatch.CreateThreeWayMergePatch(original, modified, current,
		strategicpatch.NewPatchMetaFromOpenAPI(lookupResourceV2(t, models, deployGVK)), true)
	if err != nil {
		t.Fatalf("v2 patch: %v", err)
	}
	assertJSONEqual(t, "v2 patch", gotV2, want)
}

// Every write operation of every document carries what kubectl needs.
func TestEveryWriteOperationHasFieldValidationAndGVK(t *testing.T) {
	s := mustSpec(t)
	for key, b := range s.v3Docs {
		var doc spec3.OpenAPI
		if err := json.Unmarshal(b.json, &doc); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		for path, item := range doc.Paths.Paths {
			ops := map[string]*spec3.Operation{"get": item.Get, "post": item.Post, "put": item.Put, "patch": item.Patch, "delete": item.Delete}
			for method, op := range ops {
				if op == nil {
					continue
				}
				if op.OperationId == "" {
					t.Errorf("%s %s: no operationId", method, path)
				}
				isDiscovery := strings.HasSuffix(path, "/")
				if _, ok := op.Extensions["x-kubernetes-group-version-kind"]; !ok && !isDiscovery {
					t.Errorf("%s %s: no x-kubernetes-group-version-kind", method, path)
				}
				if method != "post" && method != "put" && method != "patch" || strings.HasSuffix(path, "/exec") {
					continue
				}
				found := false
				for _, p := range op.Parameters {
					found = found || (p.Name == "fieldValidation" && p.In == "query")
				}
				if !found {
					t.Errorf("%s %s: no fieldValidation parameter", method, path)
				}
				if method == "patch" {
					if _, ok := op.RequestBody.Content["application/strategic-merge-patch+json"]; !ok {
						t.Errorf("%s %s: no strategic merge patch", method, path)
					}
				}
			}
		}
		// Every $ref resolves within the document.
		for _, ref := range refsIn(b.json) {
			name := strings.TrimPrefix(ref, "#/components/schemas/")
			if _, ok := doc.Components.Schemas[name]; !ok {
				t.Errorf("%s: dangling %s", key, ref)
			}
		}
	}
	var v2 map[string]interface{}
	if err := json.Unmarshal(s.v2.json, &v2); err != nil {
		t.Fatal(err)
	}
	defs := v2["definitions"].(map[string]interface{})
	for _, ref := range refsIn(s.v2.json) {
		if _, ok := defs[strings.TrimPrefix(ref, "#/definitions/")]; !ok {
			t.Errorf("v2: dangling %s", ref)
		}
	}
	for _, name := range []string{
		"io.k8s.apimachinery.pkg.apis.meta.v1.Status",
		"io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
		"io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
		"io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
		"io.k8s.api.autoscaling.v1.Scale",
		"io.k8s.api.core.v1.Binding",
	} {
		if _, ok := defs[name]; !ok {
			t.Errorf("v2 definitions lack %s", name)
		}
	}
	scale := defs["io.k8s.api.autoscaling.v1.Scale"].(map[string]interface{})
	if g := scale["x-kubernetes-group-version-kind"]; !strings.Contains(mustJSON(t, g), `"autoscaling"`) {
		t.Errorf("Scale GVK = %v", g)
	}
}

func TestDeterministic(t *testing.T) {
	a := mustSpec(t)
	b, err := New(testResources())
	if err != nil {
		t.Fatal(err)
	}
	if a.v2.hash != b.v2.hash || a.v3Index.hash != b.v3Index.hash {
		t.Error("two builds of the same resources differ")
	}
	// Resource order does not matter either.
	rs := testResources()
	for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
		rs[i], rs[j] = rs[j], rs[i]
	}
	c, err := New(rs)
	if err != nil {
		t.Fatal(err)
	}
	if a.v3Index.hash != c.v3Index.hash {
		t.Error("resource order changes the v3 documents")
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	pod := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	cases := map[string][]Resource{
		"no object":       {{GVK: pod, Plural: "pods", Verbs: []string{"get"}}},
		"no plural":       {{GVK: pod, Verbs: []string{"get"}, Object: &corev1.Pod{}}},
		"list w/o List":   {{GVK: pod, Plural: "pods", Verbs: []string{"list"}, Object: &corev1.Pod{}}},
		"duplicate":       {{GVK: pod, Plural: "pods", Object: &corev1.Pod{}}, {GVK: pod, Plural: "pods", Object: &corev1.Pod{}}},
		"bad subresource": {{GVK: pod, Plural: "pods", Object: &corev1.Pod{}, Subresources: []Subresource{{Name: "a/b", Verbs: []string{"get"}}}}},
	}
	for name, rs := range cases {
		if _, err := New(rs); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
	if _, err := New(nil); err != nil {
		t.Errorf("New(nil): %v", err)
	}
}

// BenchmarkNew measures what New does on the caller's path (the apiserver
// start): reflection, rendering and hashing of every document.
func BenchmarkNew(b *testing.B) {
	rs := testResources()
	warmV2Protobuf = false
	defer func() { warmV2Protobuf = true }()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := New(rs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewWithV2Protobuf adds the v2 protobuf conversion that New
// starts in the background: the full CPU cost of a start.
func BenchmarkNewWithV2Protobuf(b *testing.B) {
	rs := testResources()
	warmV2Protobuf = false
	defer func() { warmV2Protobuf = true }()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s, err := New(rs)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.v2.protobuf(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewCold is New's cost at apiserver start (the v2 protobuf
// document built lazily): a benchmark, not a wall-clock assertion.
func BenchmarkNewCold(b *testing.B) {
	warmV2Protobuf = false
	defer func() { warmV2Protobuf = true }()
	res := testResources()
	for b.Loop() {
		if _, err := New(res); err != nil {
			b.Fatal(err)
		}
	}
}

// ---- helpers ----

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func mustJSON(t *testing.T, v interface{}) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func assertJSONEqual(t *testing.T, what string, got, want []byte) {
	t.Helper()
	var g, w interface{}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if mustJSON(t, g) != mustJSON(t, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

// refsIn returns every "$ref" value in a JSON document.
func refsIn(data []byte) []string {
	var out []string
	var walk func(v interface{})
	walk = func(v interface{}) {
		switch x := v.(type) {
		case map[string]interface{}:
			for k, e := range x {
				if k == "$ref" {
					if s, ok := e.(string); ok {
						out = append(out, s)
					}
				}
				walk(e)
			}
		case []interface{}:
			for _, e := range x {
				walk(e)
			}
		}
	}
	var v interface{}
	_ = json.Unmarshal(data, &v)
	walk(v)
	return out
}

// Custom resources served as unstructured objects get a free-form schema
// and no strategic merge patch (kubectl then uses JSON merge patch), but
// still advertise fieldValidation.
func TestUnstructuredResource(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	s, err := New([]Resource{{GVK: gvk, Plural: "widgets", Namespaced: true, Verbs: allVerbs,
		Object: &unstructured.Unstructured{}, List: &unstructured.UnstructuredList{}}})
	if err != nil {
		t.Fatal(err)
	}
	var doc spec3.OpenAPI
	if err := json.Unmarshal(s.v3Docs["apis/example.com/v1"].json, &doc); err != nil {
		t.Fatal(err)
	}
	if err := supportsQueryParamV3(&doc, gvk, "fieldValidation"); err != nil {
		t.Error(err)
	}
	if gvkSupportsPatchOpenAPIV3(&doc, gvk) {
		t.Error("unstructured resource advertises strategic merge patch")
	}
	found := false
	for _, sc := range doc.Components.Schemas {
		if gvkMatchesArray(gvk, sc.Extensions) {
			found = true
			if len(sc.Properties) != 0 || !sc.Type.Contains("object") {
				t.Errorf("Widget schema = %+v", sc)
			}
		}
	}
	if !found {
		t.Error("no schema with the Widget GVK")
	}
}

// The models carry upstream's list and map semantics, from the same
// structured-merge-diff schemas the field manager merges with: containers
// a list-map by name, container ports by containerPort and protocol,
// finalizers a set, a label selector an atomic struct.
func TestListSemantics(t *testing.T) {
	srv := newServer(t)
	dc := discoveryFor(t, srv.URL)
	root := openapi3.NewRoot(openapi.NewClient(dc.RESTClient()))
	core, err := root.GVSpec(schema.GroupVersion{Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	apps, err := root.GVSpec(schema.GroupVersion{Group: "apps", Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	prop := func(doc *spec3.OpenAPI, def, field string) spec.Extensions {
		t.Helper()
		s, ok := doc.Components.Schemas[def]
		if !ok {
			t.Fatalf("no definition %s", def)
		}
		p, ok := s.Properties[field]
		if !ok {
			t.Fatalf("%s has no %s", def, field)
		}
		return p.Extensions
	}
	for _, tc := range []struct {
		doc        *spec3.OpenAPI
		def, field string
		listType   string
		keys       []string
	}{
		{core, "io.k8s.api.core.v1.PodSpec", "containers", "map", []string{"name"}},
		{core, "io.k8s.api.core.v1.Container", "ports", "map", []string{"containerPort", "protocol"}},
		{core, "io.k8s.api.core.v1.ServiceSpec", "ports", "map", []string{"port", "protocol"}},
		{core, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "finalizers", "set", nil},
		{core, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "ownerReferences", "map", []string{"uid"}},
		{core, "io.k8s.api.core.v1.Container", "args", "atomic", nil},
	} {
		ext := prop(tc.doc, tc.def, tc.field)
		if got, _ := ext.GetString("x-kubernetes-list-type"); got != tc.listType {
			t.Errorf("%s.%s: list type %q, want %q (%v)", tc.def, tc.field, got, tc.listType, ext)
		}
		if tc.keys != nil {
			got, _ := ext.GetStringSlice("x-kubernetes-list-map-keys")
			if strings.Join(got, ",") != strings.Join(tc.keys, ",") {
				t.Errorf("%s.%s: keys %v, want %v", tc.def, tc.field, got, tc.keys)
			}
		}
	}
	sel, ok := apps.Components.Schemas["io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"]
	if !ok {
		t.Fatal("no LabelSelector definition")
	}
	if mt, _ := sel.Extensions.GetString("x-kubernetes-map-type"); mt != "atomic" {
		t.Errorf("LabelSelector: map type %q, want atomic", mt)
	}
}
