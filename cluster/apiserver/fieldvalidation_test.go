package apiserver_test

import (
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Duplicate keys are named whatever the body's form: a JSON or YAML create,
// and the three JSON patch kinds. fieldValidation=Warn (the default) makes
// them Warning headers and keeps the last value, Strict a 400 that writes
// nothing, Ignore silence.
func TestDuplicateFieldsEveryBody(t *testing.T) {
	e := newEnv(t)
	cms := e.api.URL + "/api/v1/namespaces/default/configmaps"
	warnings := func(h http.Header) string { return strings.Join(h.Values("Warning"), " | ") }
	data := func(name string) map[string]string {
		cm, err := e.cs.CoreV1().ConfigMaps("default").Get(ctxT(t), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return cm.Data
	}

	yamlDup := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  k: first\n  k: last\n"
	creates := []struct {
		name, ctype, body, mode string
		code                    int
		warn                    string
	}{
		{"json-warn", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"json-warn"},"data":{"k":"first","k":"last"}}`, "", 201, `duplicate field \"data.k\"`},
		{"yaml-warn", "application/yaml", strings.Replace(yamlDup, "%s", "yaml-warn", 1), "", 201, `yaml: line 7: key \"k\" already set in map`},
		{"yaml-strict", "application/yaml", strings.Replace(yamlDup, "%s", "yaml-strict", 1), "Strict", 400, ""},
		{"yaml-ignore", "application/yaml", strings.Replace(yamlDup, "%s", "yaml-ignore", 1), "Ignore", 201, ""},
	}
	for _, c := range creates {
		url := cms
		if c.mode != "" {
			url += "?fieldValidation=" + c.mode
		}
		code, hdr, body := do(t, http.DefaultClient, "POST", url, c.ctype, c.body)
		if code != c.code {
			t.Fatalf("%s: HTTP %d, want %d: %s", c.name, code, c.code, body)
		}
		switch {
		case code == 400:
			if s := statusOf(t, body); !strings.Contains(s.Message, `key "k" already set in map`) {
				t.Errorf("%s: message %q does not name the duplicate", c.name, s.Message)
			}
			if keys := e.etcdKeys("/registry/configmaps/default/" + c.name); len(keys) != 0 {
				t.Errorf("%s: a refused create wrote %v", c.name, keys)
			}
		case c.warn != "":
			if !strings.Contains(warnings(hdr), c.warn) {
				t.Errorf("%s: warnings %q, want one with %q", c.name, warnings(hdr), c.warn)
			}
			if got := data(c.name)["k"]; got != "last" {
				t.Errorf("%s: data.k = %q, want the last value", c.name, got)
			}
		default:
			if w := warnings(hdr); w != "" {
				t.Errorf("%s: warnings %q under Ignore", c.name, w)
			}
		}
	}

	patches := []struct {
		name, ctype, body, mode string
		code                    int
		warn                    string
	}{
		{"merge-warn", "application/merge-patch+json", `{"data":{"k":"a","k":"b"}}`, "", 200, `duplicate field \"data.k\"`},
		{"strategic-warn", "application/strategic-merge-patch+json", `{"data":{"k":"c","k":"d"}}`, "", 200, `duplicate field \"data.k\"`},
		{"json-patch-warn", "application/json-patch+json", `[{"op":"add","op":"replace","path":"/data/k","value":"e"}]`, "", 200, `duplicate field \"[0].op\"`},
		{"merge-strict", "application/merge-patch+json", `{"data":{"k":"x","k":"y"}}`, "Strict", 400, ""},
		{"json-patch-strict", "application/json-patch+json", `[{"op":"replace","path":"/data/k","path":"/data/k","value":"z"}]`, "Strict", 400, ""},
		{"merge-ignore", "application/merge-patch+json", `{"data":{"k":"f","k":"g"}}`, "Ignore", 200, ""},
	}
	for _, p := range patches {
		before := data("json-warn")["k"]
		url := cms + "/json-warn"
		if p.mode != "" {
			url += "?fieldValidation=" + p.mode
		}
		code, hdr, body := do(t, http.DefaultClient, "PATCH", url, p.ctype, p.body)
		if code != p.code {
			t.Fatalf("%s: HTTP %d, want %d: %s", p.name, code, p.code, body)
		}
		switch {
		case code == 400:
			if s := statusOf(t, body); !strings.Contains(s.Message, "duplicate field") {
				t.Errorf("%s: message %q does not name the duplicate", p.name, s.Message)
			}
			if got := data("json-warn")["k"]; got != before {
				t.Errorf("%s: a refused patch changed data.k from %q to %q", p.name, before, got)
			}
		case p.warn != "":
			if !strings.Contains(warnings(hdr), p.warn) {
				t.Errorf("%s: warnings %q, want one with %q", p.name, warnings(hdr), p.warn)
			}
		default:
			if w := warnings(hdr); w != "" {
				t.Errorf("%s: warnings %q under Ignore", p.name, w)
			}
		}
	}
	if got := data("json-warn")["k"]; got != "g" {
		t.Errorf("after the patches data.k = %q, want g (the last value of the last accepted patch)", got)
	}
}
