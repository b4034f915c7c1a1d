package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestHandler(t *testing.T) {
	var up time.Duration
	h := newHandler("pod-a", "v2", 2*time.Second, func() time.Duration { return up })
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}
	for _, tc := range []struct {
		up         time.Duration
		path       string
		code       int
		bodyPrefix string
	}{
		{0, "/healthz", 200, "ok"},
		{0, "/readyz", 503, "starting"},
		{1999 * time.Millisecond, "/readyz", 503, "starting"},
		{2 * time.Second, "/readyz", 200, "ok"},
		{0, "/", 200, "hello from pod-a (kstep-app v2)"},
		{0, "/nope", 404, ""},
	} {
		up = tc.up
		code, body := get(tc.path)
		if code != tc.code || !strings.HasPrefix(body, tc.bodyPrefix) {
			t.Errorf("GET %s after %v: %d %q, want %d %q...", tc.path, tc.up, code, body, tc.code, tc.bodyPrefix)
		}
	}
}

func TestModes(t *testing.T) {
	t.Setenv("KSTEP_APP_VERSION", "v2")
	for _, tc := range []struct {
		args           []string
		stdin          string
		code           int
		stdout, stderr string
	}{
		{args: []string{"version"}, code: 0, stdout: "kstep-app v2\n"},
		{args: []string{"echo"}, stdin: "hello\nworld\n", code: 0, stdout: "hello\nworld\n"},
		{args: []string{"exit", "3"}, code: 3},
		{args: []string{"exit", "300"}, code: 2, stderr: "want one code"},
		{args: []string{"exit"}, code: 2, stderr: "want one code"},
		{args: []string{"sh"}, code: 2, stderr: `unknown mode "sh"`},
	} {
		var out, errb strings.Builder
		code := mode(tc.args, strings.NewReader(tc.stdin), &out, &errb)
		if code != tc.code || out.String() != tc.stdout || !strings.Contains(errb.String(), tc.stderr) {
			t.Errorf("%v: code %d stdout %q stderr %q; want %d %q ~%q", tc.args, code, out.String(), errb.String(), tc.code, tc.stdout, tc.stderr)
		}
	}
}
