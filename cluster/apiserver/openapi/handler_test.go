package openapi

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	openapi_v3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"
)

func do(t *testing.T, s *Spec, method, target string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

func indexURL(t *testing.T, s *Spec, key string) string {
	t.Helper()
	var idx struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	w := do(t, s, "GET", "/openapi/v3", nil)
	if err := json.Unmarshal(w.Body.Bytes(), &idx); err != nil {
		t.Fatal(err)
	}
	u, ok := idx.Paths[key]
	if !ok {
		t.Fatalf("index lacks %q", key)
	}
	return u.ServerRelativeURL
}

func TestHandlerRouting(t *testing.T) {
	s := mustSpec(t)
	protoV2Accept := "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
	cases := []struct {
		name, method, target string
		hdr                  map[string]string
		code                 int
		contentType          string
		cacheControl         string
	}{
		{"v2 json", "GET", "/openapi/v2", map[string]string{"Accept": "application/json"}, 200, "application/json", "no-cache, private"},
		{"v2 no accept", "GET", "/openapi/v2", nil, 200, "application/json", "no-cache, private"},
		{"v2 protobuf", "GET", "/openapi/v2", map[string]string{"Accept": protoV2Accept}, 200,
			"application/com.github.proto-openapi.spec.v2.v1.0+protobuf", "no-cache, private"},
		{"v2 protobuf preferred by q", "GET", "/openapi/v2", map[string]string{"Accept": "application/json;q=0.5, " + protoV2Accept}, 200,
			"application/com.github.proto-openapi.spec.v2.v1.0+protobuf", "no-cache, private"},
		{"v2 wildcard", "GET", "/openapi/v2", map[string]string{"Accept": "*/*"}, 200, "application/json", "no-cache, private"},
		{"v2 not acceptable", "GET", "/openapi/v2", map[string]string{"Accept": "text/html"}, 406, "", ""},
		{"v2 head", "HEAD", "/openapi/v2", nil, 200, "application/json", "no-cache, private"},
		{"v2 post", "POST", "/openapi/v2", nil, 405, "", ""},
		{"v3 index", "GET", "/openapi/v3", nil, 200, "application/json", "no-cache, private"},
		{"v3 index slash", "GET", "/openapi/v3/", nil, 200, "application/json", "no-cache, private"},
		{"v3 index protobuf", "GET", "/openapi/v3", map[string]string{"Accept": "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"}, 406, "", ""},
		{"v3 doc no hash", "GET", "/openapi/v3/apis/apps/v1", map[string]string{"Accept": "application/json"}, 200, "application/json", "no-cache, private"},
		{"v3 doc protobuf", "GET", "/openapi/v3/api/v1", map[string]string{"Accept": "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"}, 200,
			"application/com.github.proto-openapi.spec.v3.v1.0+protobuf", "no-cache, private"},
		{"v3 group doc", "GET", "/openapi/v3/apis/apps", nil, 200, "application/json", "no-cache, private"},
		{"v3 unknown gv", "GET", "/openapi/v3/apis/nope/v1", nil, 404, "", ""},
		{"other path", "GET", "/openapi/v4", nil, 404, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := do(t, s, tc.method, tc.target, tc.hdr)
			if w.Code != tc.code {
				t.Fatalf("code = %d, want %d: %s", w.Code, tc.code, w.Body.String())
			}
			if tc.code != 200 {
				return
			}
			if got := w.Header().Get("Content-Type"); got != tc.contentType {
				t.Errorf("Content-Type = %q, want %q", got, tc.contentType)
			}
			if got := w.Header().Get("Cache-Control"); got != tc.cacheControl {
				t.Errorf("Cache-Control = %q, want %q", got, tc.cacheControl)
			}
			if w.Header().Get("Etag") == "" || w.Header().Get("Last-Modified") == "" {
				t.Errorf("missing Etag/Last-Modified: %v", w.Header())
			}
			if !strings.Contains(strings.Join(w.Header().Values("Vary"), ","), "Accept") {
				t.Errorf("Vary = %v", w.Header().Values("Vary"))
			}
			if tc.method == "HEAD" {
				if w.Body.Len() != 0 {
					t.Error("HEAD returned a body")
				}
				return
			}
			if n, _ := strconv.Atoi(w.Header().Get("Content-Length")); n != w.Body.Len() {
				t.Errorf("Content-Length %d, body %d", n, w.Body.Len())
			}
		})
	}
}

func TestHandlerProtobufBodies(t *testing.T) {
	s := mustSpec(t)
	w := do(t, s, "GET", "/openapi/v2", map[string]string{"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"})
	var v2 openapi_v2.Document
	if err := proto.Unmarshal(w.Body.Bytes(), &v2); err != nil {
		t.Fatalf("v2 protobuf: %v", err)
	}
	if len(v2.GetDefinitions().GetAdditionalProperties()) == 0 || len(v2.GetPaths().GetPath()) == 0 {
		t.Error("v2 protobuf is empty")
	}
	w = do(t, s, "GET", "/openapi/v3/apis/apps/v1", map[string]string{"Accept": "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"})
	var v3 openapi_v3.Document
	if err := proto.Unmarshal(w.Body.Bytes(), &v3); err != nil {
		t.Fatalf("v3 protobuf: %v", err)
	}
	if v3.GetOpenapi() != "3.0.0" || len(v3.GetComponents().GetSchemas().GetAdditionalProperties()) == 0 {
		t.Errorf("v3 protobuf: openapi=%q", v3.GetOpenapi())
	}
}

func TestHandlerHashAndETag(t *testing.T) {
	s := mustSpec(t)
	u := indexURL(t, s, "apis/apps/v1")
	if !strings.HasPrefix(u, "/openapi/v3/apis/apps/v1?hash=") {
		t.Fatalf("serverRelativeURL = %q", u)
	}

	// Matching hash: immutable, cacheable for a year.
	w := do(t, s, "GET", u, map[string]string{"Accept": "application/json"})
	if w.Code != 200 {
		t.Fatalf("code %d", w.Code)
	}
	if cc := w.Header().Get("Cache-Control"); cc != "public, immutable" {
		t.Errorf("Cache-Control = %q", cc)
	}
	if w.Header().Get("Expires") == "" {
		t.Error("no Expires")
	}
	etag := w.Header().Get("Etag")
	hash := strings.TrimPrefix(u, "/openapi/v3/apis/apps/v1?hash=")
	if etag != strconv.Quote(hash) {
		t.Errorf("Etag %s, hash %s", etag, hash)
	}
	if computeHash(w.Body.Bytes()) != hash {
		t.Error("hash is not the SHA-512 of the served JSON")
	}

	// Stale hash: permanent redirect to the current URL.
	w = do(t, s, "GET", "/openapi/v3/apis/apps/v1?hash=0123", nil)
	if w.Code != http.StatusMovedPermanently || w.Header().Get("Location") != u {
		t.Errorf("stale hash: code %d, Location %q, want 301 %q", w.Code, w.Header().Get("Location"), u)
	}

	// Conditional requests.
	for _, target := range []string{u, "/openapi/v2", "/openapi/v3"} {
		w = do(t, s, "GET", target, nil)
		et := w.Header().Get("Etag")
		w = do(t, s, "GET", target, map[string]string{"If-None-Match": et})
		if w.Code != http.StatusNotModified || w.Body.Len() != 0 {
			t.Errorf("%s If-None-Match: code %d, body %d", target, w.Code, w.Body.Len())
		}
		w = do(t, s, "GET", target, map[string]string{"If-None-Match": `"other", W/` + et})
		if w.Code != http.StatusNotModified {
			t.Errorf("%s If-None-Match list: code %d", target, w.Code)
		}
		w = do(t, s, "GET", target, map[string]string{"If-None-Match": `"other"`})
		if w.Code != 200 {
			t.Errorf("%s If-None-Match mismatch: code %d", target, w.Code)
		}
	}

	// The same ETag serves the protobuf form.
	w = do(t, s, "GET", u, map[string]string{"Accept": "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"})
	if w.Code != 200 || w.Header().Get("Etag") != etag {
		t.Errorf("protobuf: code %d, Etag %q", w.Code, w.Header().Get("Etag"))
	}
}

func TestHandlerGzip(t *testing.T) {
	s := mustSpec(t)
	plain := do(t, s, "GET", "/openapi/v2", nil)
	w := do(t, s, "GET", "/openapi/v2", map[string]string{"Accept-Encoding": "gzip, deflate"})
	if w.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding = %q", w.Header().Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(w.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, plain.Body.Bytes()) {
		t.Error("gzipped body differs")
	}
	if w.Body.Len() >= plain.Body.Len()/2 {
		t.Errorf("gzip did not shrink the body: %d -> %d", plain.Body.Len(), w.Body.Len())
	}
	w = do(t, s, "GET", "/openapi/v2", map[string]string{"Accept-Encoding": "gzip;q=0"})
	if w.Header().Get("Content-Encoding") != "" {
		t.Error("gzip;q=0 was gzipped")
	}
}

func TestNegotiate(t *testing.T) {
	cases := []struct {
		accept string
		want   string // contentType, "" for none
	}{
		{"", "application/json"},
		{"*/*", "application/json"},
		{"*", "application/json"},
		{"application/*", "application/json"},
		{"application/json, */*", "application/json"},
		{"application/com.github.proto-openapi.spec.v2@v1.0+protobuf", "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"},
		{"application/com.github.proto-openapi.spec.v2.v1.0+protobuf", "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"},
		{"application/json;q=0.9,application/com.github.proto-openapi.spec.v2@v1.0+protobuf", "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"},
		{"*/*;q=0.1, application/com.github.proto-openapi.spec.v2@v1.0+protobuf", "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"},
		{"application/json;q=0", ""},
		{"text/plain", ""},
		{"application/xml", ""},
	}
	for _, tc := range cases {
		o, ok := negotiate(tc.accept, v2Offers)
		got := ""
		if ok {
			got = o.contentType
		}
		if got != tc.want {
			t.Errorf("negotiate(%q) = %q, want %q", tc.accept, got, tc.want)
		}
	}
}

// Concurrent first requests share the lazily built protobuf and gzip forms.
func TestHandlerConcurrent(t *testing.T) {
	s, err := New(testResources())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	bodies := make([][]byte, 8)
	for i := range bodies {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			hdr := map[string]string{"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}
			if i%2 == 1 {
				hdr["Accept-Encoding"] = "gzip"
			}
			r := httptest.NewRequest("GET", "/openapi/v2", nil)
			for k, v := range hdr {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			s.ServeHTTP(w, r)
			bodies[i] = w.Body.Bytes()
		}(i)
	}
	wg.Wait()
	for i := 2; i < len(bodies); i++ {
		if !bytes.Equal(bodies[i], bodies[i%2]) {
			t.Fatalf("response %d differs", i)
		}
	}
}
