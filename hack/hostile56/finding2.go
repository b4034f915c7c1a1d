package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const storedConfigMaps = 3000

// forgeContinue is a continue token in upstream's format starting at
// start (relative to the list's prefix, as upstream encodes it).
func forgeContinue(rv int64, start string) string {
	b, _ := json.Marshal(map[string]any{"v": "meta.k8s.io/v1", "rv": rv, "start": start})
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeContinue is a token's start key and revision ("" when it is not
// upstream's format).
func decodeContinue(tok string) (start string, rv int64) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return "", 0
	}
	var t struct {
		V     string `json:"v"`
		RV    int64  `json:"rv"`
		Start string `json:"start"`
	}
	if json.Unmarshal(b, &t) != nil || t.V != "meta.k8s.io/v1" {
		return "", 0
	}
	return t.Start, t.RV
}

// finding2: a hand-made continue token started a list anywhere before its
// prefix: /registry/ scanned every key before alice's pods (with 3,000
// ConfigMaps stored), and lists over another resource's keys answered 500
// or phantom items.
func (e *env) finding2() {
	st := &statuses{}
	e.step("2", "alice", fmt.Sprintf("create %d ConfigMaps (8 at once)", storedConfigMaps), func() string {
		parallel(storedConfigMaps, 8, func(i int) {
			body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"stored-%04d"},"data":{"k":"v"}}`, i)
			code, _, err := do(e.aliceHTTP, "POST", e.host+"/api/v1/namespaces/"+e.ns+"/configmaps", "application/json", []byte(body))
			st.add(code, err)
		})
		return st.String()
	}, func() (string, bool) {
		ctx, cancel := e.ctx()
		defer cancel()
		l, err := e.adminCS.CoreV1().ConfigMaps(e.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error(), false
		}
		return fmt.Sprintf("%d ConfigMaps in %s", len(l.Items), e.ns), st.only(201)
	})

	pods := e.host + "/api/v1/namespaces/" + e.ns + "/pods?limit=1"
	var tok string
	var rv int64
	var code int
	var body []byte
	e.step("2", "alice", "GET pods?limit=1 (the baseline)", func() string {
		var err error
		code, body, err = do(e.aliceHTTP, "GET", pods, "", nil)
		var l metav1.List
		if json.Unmarshal(body, &l) == nil {
			tok = l.Continue
		}
		return httpStatus(code, nil, err)
	}, func() (string, bool) {
		start, r := decodeContinue(tok)
		rv = r
		return fmt.Sprintf("the continue token it issued starts at %q (relative to the list's prefix), rv %d", start, r),
			code == 200 && start != "" && !strings.HasPrefix(start, "/")
	})
	e.step("2", "alice", "GET pods?limit=1&continue=<the token issued>", func() string {
		var err error
		code, body, err = do(e.aliceHTTP, "GET", pods+"&continue="+url.QueryEscape(tok), "", nil)
		return httpStatus(code, nil, err)
	}, func() (string, bool) {
		return "a real token still pages", code == 200
	})

	ns := e.host + "/api/v1/namespaces/" + e.ns
	forged := []struct{ who, what, url string }{
		{"alice", "GET pods?limit=1&continue=1:/registry/ (the old format)", pods + "&continue=" + url.QueryEscape("1:/registry/")},
		{"alice", `GET pods?limit=1&continue={"start":"/registry/"}`, pods + "&continue=" + forgeContinue(rv, "/registry/")},
		{"alice", `GET pods?limit=1&continue={"start":"../../configmaps/` + e.ns + `/"}`, pods + "&continue=" + forgeContinue(rv, "../../configmaps/"+e.ns+"/")},
		{"alice", `GET configmaps?limit=1&continue={"start":"../../secrets/"}`, ns + "/configmaps?limit=1&continue=" + forgeContinue(rv, "../../secrets/")},
		{"admin", `GET /api/v1/services?limit=1&continue={"start":"../secrets/"} (a Service list over Secret keys)`, e.host + "/api/v1/services?limit=1&continue=" + forgeContinue(rv, "../secrets/")},
		{"admin", `GET /api/v1/nodes?limit=1&continue={"start":"../leases/kube-node-lease/"} (a Node list over Lease keys)`, e.host + "/api/v1/nodes?limit=1&continue=" + forgeContinue(rv, "../leases/kube-node-lease/")},
		{"admin", `GET /api/v1/serviceaccounts?limit=1&continue={"start":"../secrets/"} (cluster-wide)`, e.host + "/api/v1/serviceaccounts?limit=1&continue=" + forgeContinue(rv, "../secrets/")},
	}
	for _, f := range forged {
		c := e.aliceHTTP
		if f.who == "admin" {
			c = e.adminHTTP
		}
		e.step("2", f.who, f.what, func() string {
			var err error
			code, body, err = do(c, "GET", f.url, "", nil)
			return httpStatus(code, body, err)
		}, func() (string, bool) {
			return "refused: no item of another prefix, no 500", code == 400
		})
	}
	st = &statuses{}
	var slowest time.Duration
	e.step("2", "alice", `40 × GET pods?limit=1&continue={"start":"/registry/"} at once`, func() string {
		parallel(40, 40, func(int) {
			start := time.Now()
			code, _, err := do(e.aliceHTTP, "GET", pods+"&continue="+forgeContinue(rv, "/registry/"), "", nil)
			took := time.Since(start)
			st.mu.Lock()
			slowest = max(slowest, took)
			st.mu.Unlock()
			st.add(code, err)
		})
		return st.String()
	}, func() (string, bool) {
		return fmt.Sprintf("all refused, the slowest in %s (was 3.3 s)", fmtDur(slowest)), st.only(400)
	})
}
