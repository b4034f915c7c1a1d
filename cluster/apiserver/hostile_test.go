package apiserver_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/apiserver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Hostile input beyond malformed bodies: huge label values, invalid UTF-8,
// nesting in YAML, bodies without a length, oversized headers. Each is a
// clean 4xx and nothing is written.
func TestHostileInput(t *testing.T) {
	e := newEnv(t)
	cm := func(meta string) string { return `{"apiVersion":"v1","kind":"ConfigMap","metadata":` + meta + `}` }
	cases := []struct {
		name, ctype, body string
		code              int32
		reason            metav1.StatusReason
	}{
		{"huge label value", "application/json", cm(`{"name":"l","labels":{"k":"` + strings.Repeat("v", 64<<10) + `"}}`), 422, metav1.StatusReasonInvalid},
		{"huge label key", "application/json", cm(`{"name":"l","labels":{"` + strings.Repeat("k", 300) + `":"v"}}`), 422, metav1.StatusReasonInvalid},
		{"many huge annotations", "application/json", cm(`{"name":"a","annotations":{"a":"` + strings.Repeat("x", 300<<10) + `"}}`), 422, metav1.StatusReasonInvalid},
		{"invalid UTF-8 name", "application/json", cm("{\"name\":\"a\xff\xfeb\"}"), 422, metav1.StatusReasonInvalid},
		{"invalid UTF-8 label", "application/json", cm("{\"name\":\"u\",\"labels\":{\"k\xff\":\"v\"}}"), 422, metav1.StatusReasonInvalid},
		{"deep YAML", "application/yaml", strings.Repeat("- ", 20000) + "x", 400, metav1.StatusReasonBadRequest},
		{"deep YAML flow", "application/yaml", strings.Repeat("[", 20000), 400, metav1.StatusReasonBadRequest},
		{"deep JSON objects", "application/json", strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000), 400, metav1.StatusReasonBadRequest},
		{"YAML alias bomb", "application/yaml", yamlBomb, 400, metav1.StatusReasonBadRequest},
		{"NUL bytes", "application/json", "\x00\x00\x00", 400, metav1.StatusReasonBadRequest},
		{"empty body", "application/json", "", 400, metav1.StatusReasonBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, body := do(t, http.DefaultClient, "POST", e.api.URL+"/api/v1/namespaces/default/configmaps", tc.ctype, tc.body)
			if int32(code) != tc.code {
				t.Fatalf("HTTP %d, want %d: %.300s", code, tc.code, body)
			}
			if s := statusOf(t, body); s.Code != tc.code || s.Reason != tc.reason {
				t.Fatalf("status %d %q, want %d %q", s.Code, s.Reason, tc.code, tc.reason)
			}
			if keys := e.etcdKeys("/registry/configmaps/"); len(keys) != 0 {
				t.Fatalf("etcd holds %v after a refused write", keys)
			}
		})
	}

	t.Run("chunked body over the limit", func(t *testing.T) {
		pr, pw := io.Pipe()
		go func() {
			_, _ = pw.Write([]byte(`{"metadata":{"name":"big"},"data":{"k":"`))
			chunk := []byte(strings.Repeat("x", 64<<10))
			for range 64 { // 4 MiB, never all read
				if _, err := pw.Write(chunk); err != nil {
					return
				}
			}
			pw.Close()
		}()
		req, _ := http.NewRequest("POST", e.api.URL+"/api/v1/namespaces/default/configmaps", pr)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		pr.CloseWithError(io.EOF)
		if resp.StatusCode != 413 {
			t.Fatalf("HTTP %d, want 413: %.300s", resp.StatusCode, body)
		}
	})

	t.Run("oversized headers", func(t *testing.T) {
		req, _ := http.NewRequest("GET", e.api.URL+"/api/v1/namespaces/default/configmaps", nil)
		req.Header.Set("X-Big", strings.Repeat("h", 2<<20))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return // the server may close the connection mid-write: refused either way
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("HTTP %d, want 431", resp.StatusCode)
		}
	})
}

// yamlBomb is the billion-laughs document: nine levels of nine aliases.
var yamlBomb = func() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("a" + itoa(i) + ": &a" + itoa(i) + " [")
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString("*a" + itoa(i-1))
		}
		b.WriteString("]\n")
	}
	return b.String()
}()

func itoa(i int) string { return string(rune('0' + i)) }

// Slow clients: headers trickling in (slowloris) lose their connection at
// the header timeout; a body that stalls gets a 400 at the body timeout.
// Nothing is written either way, and the server keeps serving others.
func TestSlowClients(t *testing.T) {
	e := newEnvWith(t, func(o *apiserver.Options) { o.ReadHeaderTimeout, o.BodyReadTimeout = time.Second, time.Second })
	addr := strings.TrimPrefix(e.api.URL, "http://")

	t.Run("slowloris headers", func(t *testing.T) {
		var conns []net.Conn
		for range 20 {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
			_, _ = c.Write([]byte("POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nX-Slow: "))
		}
		// Others are served meanwhile.
		if code, _, _ := do(t, http.DefaultClient, "GET", e.api.URL+"/api/v1/namespaces/default/configmaps", "", ""); code != 200 {
			t.Fatalf("a normal request during the slowloris: %d", code)
		}
		for _, c := range conns {
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			// Trickle one more byte; the server must cut us off anyway.
			_, _ = c.Write([]byte("a"))
			_, err := io.ReadAll(c)
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("the server kept a slowloris connection open past 10s (header timeout 1s)")
			}
			c.Close()
		}
	})

	t.Run("stalled body", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = c.Write([]byte("POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"metadata\":{\"name\":\"slow\"}"))
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("no answer to a stalled body within 10s (body timeout 1s): %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 400 {
			t.Fatalf("HTTP %d, want 400: %s", resp.StatusCode, body)
		}
		if keys := e.etcdKeys("/registry/configmaps/default/slow"); len(keys) != 0 {
			t.Fatalf("etcd holds %v", keys)
		}
	})
}
