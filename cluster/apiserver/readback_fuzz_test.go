package apiserver_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/kstep-dev/kstep/internal/testenv"
)

// deepManagedFields is a ConfigMap whose one managed fields entry's
// fieldsV1 nests depth levels deep ({"f:a":{"f:a":...{}}}).
func deepManagedFields(name string, depth int) string {
	fields := strings.Repeat(`{"f:a":`, depth-1) + "{}" + strings.Repeat("}", depth-1)
	return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","managedFields":[{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":` +
		fields + `}]},"data":{"a":"b"}}`
}

// The forms clients read objects in: client-go's JSON, YAML and protobuf
// (its scheme's codecs), kubectl's YAML (sigs.k8s.io/yaml) and its Table.
var readForms = []struct{ name, accept string }{
	{"json", "application/json"},
	{"yaml", "application/yaml"},
	{"protobuf", "application/vnd.kubernetes.protobuf"},
	{"table", "application/json;as=Table;v=v1;g=meta.k8s.io"},
}

// FuzzStoredObjectsReadBack: whatever ConfigMap the apiserver accepts,
// every client can read back, alone and in a list, in every form it reads
// (a stored object no list can decode breaks every client's list of its
// kind, the admin's `kubectl get cm -A` included). An input refused is a
// clean 4xx, never a 5xx.
func FuzzStoredObjectsReadBack(f *testing.F) {
	f.Add(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"plain","labels":{"a":"b"}},"data":{"k":"v"}}`)
	f.Add(deepManagedFields("deep9994", 9994)) // the hostile user's: accepted, it broke every list
	f.Add(deepManagedFields("deep9997", 9997))
	f.Add(deepManagedFields("deep40", 40))
	f.Add(deepManagedFields("deep8", 8))
	f.Add(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"raw","managedFields":[{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":[[[[]]]]}]}}`)
	url, _ := testenv.Etcd(f)
	api := testenv.StartAPIServer(f, url, nil)
	base := api.URL + "/api/v1/namespaces/default/configmaps"
	f.Fuzz(func(t *testing.T, body string) {
		code, _, resp := do(t, http.DefaultClient, "POST", base, "application/json", body)
		if code >= 500 {
			t.Fatalf("create: HTTP %d: %.300s", code, resp)
		}
		if code != http.StatusCreated {
			return
		}
		created := &corev1.ConfigMap{}
		if err := runtime.DecodeInto(scheme.Codecs.UniversalDeserializer(), resp, created); err != nil {
			t.Fatalf("the create's answer: %v", err)
		}
		defer do(t, http.DefaultClient, "DELETE", base+"/"+created.Name, "", "")
		for _, form := range readForms {
			for _, list := range []bool{false, true} {
				u, what := base+"/"+created.Name, "get"
				if list {
					u, what = base, "list"
				}
				b := get(t, u, form.accept)
				if err := readBack(form.name, list, b, created.Name); err != nil {
					t.Fatalf("%s as %s (%d bytes): %v", what, form.name, len(b), err)
				}
			}
		}
	})
}

// get reads u as accept, 200 or the test fails.
func get(t *testing.T, u, accept string) []byte {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s as %s: HTTP %d: %.300s", u, accept, resp.StatusCode, b)
	}
	return b
}

// readBack decodes b, a ConfigMap (list: a list holding it) in form, as
// client-go and kubectl decode it, and finds name in it.
func readBack(form string, list bool, b []byte, name string) error {
	var names []string
	switch form {
	case "json", "yaml", "protobuf":
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(b, nil, nil)
		if err != nil {
			return fmt.Errorf("client-go: %w", err)
		}
		switch o := obj.(type) {
		case *corev1.ConfigMap:
			names = append(names, o.Name)
		case *corev1.ConfigMapList:
			for _, it := range o.Items {
				names = append(names, it.Name)
			}
		default:
			return fmt.Errorf("client-go decoded a %T", obj)
		}
		if form == "yaml" {
			// kubectl reads YAML into unstructured objects.
			var u map[string]any
			if err := yaml.Unmarshal(b, &u); err != nil {
				return fmt.Errorf("sigs.k8s.io/yaml: %w", err)
			}
		}
	case "table":
		// kubectl get: the Table through the JSON decoder client-go's
		// REST client uses, then each row's object as unstructured.
		var tab metav1.Table
		if err := utiljson.Unmarshal(b, &tab); err != nil {
			return fmt.Errorf("table: %w", err)
		}
		for _, row := range tab.Rows {
			obj, _, err := unstructured.UnstructuredJSONScheme.Decode(row.Object.Raw, nil, nil)
			if err != nil {
				return fmt.Errorf("table row: %w", err)
			}
			u, ok := obj.(metav1.Object)
			if !ok {
				return fmt.Errorf("table row is a %T", obj)
			}
			names = append(names, u.GetName())
		}
	}
	for _, n := range names {
		if n == name {
			return nil
		}
	}
	return fmt.Errorf("%s not found (list %v: %v)", name, list, names)
}
