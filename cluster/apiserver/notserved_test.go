package apiserver_test

import (
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// notServedRow is one row of docs/guides/apiserver.md's table of what is not served:
// `METHOD /path` (and a content type) in its second column, the status a
// client gets first in its third.
var notServedRow = regexp.MustCompile("^\\|[^|]+\\| `([A-Z]+) ([^` ]+)(?: ([a-z+/-]+))?` \\| (\\d{3}) ")

// docs/guides/apiserver.md says what is not served and what a client gets instead; every
// row of that table is asked of a real apiserver, so the table stays true.
func TestREADMENotServedTable(t *testing.T) {
	readme, err := os.ReadFile("../../docs/guides/apiserver.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "<!-- not-served -->")
	end := strings.Index(text, "<!-- /not-served -->")
	if start < 0 || end < start {
		t.Fatal("docs/guides/apiserver.md has no <!-- not-served --> table")
	}
	e := newEnv(t)
	rows := 0
	for _, line := range strings.Split(text[start:end], "\n") {
		m := notServedRow.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		rows++
		method, path, ctype, want := m[1], m[2], m[3], m[4]
		body := ""
		if method != "GET" && method != "DELETE" {
			body = "{}"
			if ctype == "" {
				ctype = "application/json"
			}
		}
		code, _, resp := do(t, http.DefaultClient, method, e.api.URL+path, ctype, body)
		if strconv.Itoa(code) != want {
			t.Errorf("docs/guides/apiserver.md: %s %s → %s; the apiserver answers %d: %.300s", method, path, want, code, resp)
			continue
		}
		if s := statusOf(t, resp); strconv.Itoa(int(s.Code)) != want {
			t.Errorf("%s %s: a Status with code %d, want %s: %.300s", method, path, s.Code, want, resp)
		}
	}
	if rows < 10 {
		t.Fatalf("found %d rows in docs/guides/apiserver.md's not-served table, want its every row (10 or more)", rows)
	}
}
