package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
)

const reviewPath = "/apis/authentication.k8s.io/v1/selfsubjectreviews"

// reviewBody is kubectl auth whoami's SelfSubjectReview.
const reviewBody = `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview","metadata":{"creationTimestamp":null},"status":{"userInfo":{}}}`

// finding6: an upgrade through nodes/proxy dropped the query string, and
// nodes/proxy was authorized by method (a WebSocket upgrade is a GET);
// a SelfSubjectReview over HTTP/2 with a body now and then ended in a
// stream error (the handler never read the body).
func (e *env) finding6() {
	proxy := e.host + "/api/v1/nodes/" + e.node + "/proxy"
	execQuery := "?command=/app&command=version&output=1&error=1"
	execPath := "/exec/" + e.ns + "/victim-0/app" + execQuery
	var stdout, stderr bytes.Buffer
	var streamErr error
	e.step("6", "admin", "exec through nodes/proxy (SPDY): POST /api/v1/nodes/"+e.node+"/proxy"+execPath, func() string {
		u, _ := url.Parse(proxy + execPath)
		ex, err := remotecommand.NewSPDYExecutor(e.admin, "POST", u)
		if err != nil {
			streamErr = err
			return "error: " + err.Error()
		}
		ctx, cancel := e.ctx()
		defer cancel()
		streamErr = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr})
		if streamErr != nil {
			return "stream: " + excerpt(streamErr.Error(), 140)
		}
		return "101, exit 0"
	}, func() (string, bool) {
		if e.realNode {
			return fmt.Sprintf("stdout %q: the command in the query string ran", strings.TrimSpace(stdout.String())),
				streamErr == nil && strings.TrimSpace(stdout.String()) == "kstep-app v1"
		}
		// A hollow kubelet: its runtime refuses to exec, after it read
		// the command; without the query the kubelet answers 400.
		msg := fmt.Sprint(streamErr)
		return "the hollow runtime answered (the query string arrived): " + excerpt(msg, 120),
			strings.Contains(msg, "run no processes") && !strings.Contains(msg, "must specify")
	})

	// alice may get nodes/proxy, and nothing else on nodes.
	ctx, cancel := e.ctx()
	defer cancel()
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: proxyGetCR},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes/proxy"}, Verbs: []string{"get"}}}}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: proxyGetCR},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: proxyGetCR},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "alice"}}}
	_, err1 := e.adminCS.RbacV1().ClusterRoles().Create(ctx, cr, metav1.CreateOptions{})
	_, err2 := e.adminCS.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{})
	var code int
	var body []byte
	e.step("6", "alice (get nodes/proxy)", "GET /api/v1/nodes/"+e.node+"/proxy/healthz", func() string {
		if err := waitFor(ctx, "alice's get on nodes/proxy", func() error {
			var err error
			code, body, err = do(e.aliceHTTP, "GET", proxy+"/healthz", "", nil)
			if err == nil && code != 200 {
				err = fmt.Errorf("HTTP %d", code)
			}
			return err
		}); err != nil {
			return "error: " + err.Error()
		}
		return httpStatus(code, nil, nil) + " " + excerpt(string(body), 40)
	}, func() (string, bool) {
		return fmt.Sprintf("ClusterRole %s (get nodes/proxy) bound to alice: %v; get is served", proxyGetCR, errJoin(err1, err2)), code == 200 && err1 == nil && err2 == nil
	})

	wsHeaders := []string{"Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13",
		"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol", "v5.channel.k8s.io"}
	spdyHeaders := []string{"Connection", "Upgrade", "Upgrade", "SPDY/3.1", "X-Stream-Protocol-Version", "v4.channel.k8s.io"}
	for _, tc := range []struct {
		what, method, path string
		hdr                []string
	}{
		{"GET (WebSocket upgrade)", "GET", execPath, wsHeaders},
		{"GET (SPDY upgrade)", "GET", execPath, spdyHeaders},
		{"POST (SPDY upgrade)", "POST", execPath, spdyHeaders},
		{"GET, no upgrade", "GET", execPath, nil},
		{"GET (WebSocket upgrade)", "GET", "/attach/" + e.ns + "/victim-0/app?output=1", wsHeaders},
		{"GET (WebSocket upgrade)", "GET", "/portForward/" + e.ns + "/victim-0?port=8080", wsHeaders},
		{"GET (WebSocket upgrade)", "GET", "/healthz", wsHeaders},
	} {
		var code int
		e.step("6", "alice (get nodes/proxy)", tc.what+" /api/v1/nodes/"+e.node+"/proxy"+tc.path, func() string {
			var err error
			var b []byte
			code, b, err = do(e.aliceHTTP1, tc.method, proxy+tc.path, "", nil, tc.hdr...)
			return httpStatus(code, b, err)
		}, func() (string, bool) {
			return "refused: an upgrade or a stream through nodes/proxy needs create", code == 403
		})
	}

	// SelfSubjectReview over HTTP/2: the request's headers, then its body
	// after a second (or after an answer, whichever first).
	var early, frames []h2Frame
	var dialErr error
	e.step("6", "alice", "SelfSubjectReview over raw HTTP/2: HEADERS, 1 s, then DATA (the body)", func() string {
		early, frames, dialErr = e.h2Review()
		if dialErr != nil {
			return "error: " + dialErr.Error()
		}
		code, _, reset := h2Answer(append(early, frames...))
		if reset != "" {
			return fmt.Sprintf("%d, then RST_STREAM %s", code, reset)
		}
		return strconv.Itoa(code)
	}, func() (string, bool) {
		code, body, reset := h2Answer(append(early, frames...))
		return fmt.Sprintf("%d frames before the body was sent; answer %q; reset: %q", len(early), excerpt(body, 80), reset),
			dialErr == nil && len(early) == 0 && code == 201 && reset == "" && strings.Contains(body, `"username":"alice"`)
	})
	st := &statuses{}
	var h1 int
	e.step("6", "alice", "500 × SelfSubjectReview with a body over client-go's HTTP/2 transport, 50 at once", func() string {
		hc, err := rest.HTTPClientFor(e.alice)
		if err != nil {
			return "error: " + err.Error()
		}
		hc.Timeout = e.timeout
		parallel(500, 50, func(int) {
			resp, err := hc.Post(e.host+reviewPath, "application/json", strings.NewReader(reviewBody))
			if err != nil {
				st.add(-1, err)
				return
			}
			var b bytes.Buffer
			_, err = b.ReadFrom(resp.Body)
			resp.Body.Close()
			st.add(resp.StatusCode, err)
			if resp.ProtoMajor != 2 {
				st.mu.Lock()
				h1++
				st.mu.Unlock()
			}
		})
		return st.String()
	}, func() (string, bool) {
		return fmt.Sprintf("no stream error; %d answered over HTTP/1", h1), st.only(201) && h1 == 0
	})
}

func errJoin(errs ...error) string {
	var s []string
	for _, err := range errs {
		if err != nil {
			s = append(s, err.Error())
		}
	}
	if len(s) == 0 {
		return "ok"
	}
	return strings.Join(s, "; ")
}

// h2Review sends one SelfSubjectReview on a raw HTTP/2 connection as
// alice: the headers, then (after an answer or 1 s) the body. It returns
// the frames of stream 1 that came before the body and after it.
func (e *env) h2Review() (early, after []h2Frame, err error) {
	cfg, err := rest.TLSConfigFor(e.alice)
	if err != nil {
		return nil, nil, err
	}
	cfg.NextProtos = []string{"h2"}
	u, err := url.Parse(e.host)
	if err != nil {
		return nil, nil, err
	}
	d := &tls.Dialer{Config: cfg}
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
	defer cancel()
	nc, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, nil, err
	}
	conn := nc.(*tls.Conn)
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(e.timeout))
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		return nil, nil, fmt.Errorf("negotiated %q, want h2", p)
	}
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		return nil, nil, err
	}
	fr := http2.NewFramer(conn, conn)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if err := fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 30}); err != nil {
		return nil, nil, err
	}
	if err := fr.WriteWindowUpdate(0, 1<<30); err != nil {
		return nil, nil, err
	}
	type frameOrErr struct {
		f   h2Frame
		err error
	}
	frames := make(chan frameOrErr, 64)
	ack := make(chan struct{}, 8)
	go func() {
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				frames <- frameOrErr{err: err}
				close(frames)
				return
			}
			if sf, ok := f.(*http2.SettingsFrame); ok && !sf.IsAck() {
				ack <- struct{}{}
				continue
			}
			if f.Header().StreamID != 1 {
				continue
			}
			switch f := f.(type) {
			case *http2.MetaHeadersFrame:
				code, _ := strconv.Atoi(f.PseudoValue("status"))
				frames <- frameOrErr{f: h2Frame{status: code, end: f.StreamEnded()}}
			case *http2.DataFrame: // the framer reuses its buffer
				frames <- frameOrErr{f: h2Frame{data: append([]byte(nil), f.Data()...), end: f.StreamEnded()}}
			case *http2.RSTStreamFrame:
				frames <- frameOrErr{f: h2Frame{reset: f.ErrCode.String(), end: true}}
			}
		}
	}()
	// Writes happen here alone: the reader signals settings to ack.
	flushAcks := func() error {
		for {
			select {
			case <-ack:
				if err := fr.WriteSettingsAck(); err != nil {
					return err
				}
			default:
				return nil
			}
		}
	}
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "https"}, {":authority", u.Host}, {":path", reviewPath},
		{"content-type", "application/json"}, {"content-length", strconv.Itoa(len(reviewBody))}} {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndHeaders: true}); err != nil {
		return nil, nil, err
	}
	readUntil := func(d time.Duration) ([]h2Frame, error) {
		var got []h2Frame
		deadline := time.After(d)
		for {
			if err := flushAcks(); err != nil {
				return got, err
			}
			select {
			case fe, ok := <-frames:
				if !ok || fe.err != nil {
					return got, nil
				}
				got = append(got, fe.f)
				if fe.f.end {
					return got, nil
				}
			case <-deadline:
				return got, nil
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	early, err = readUntil(time.Second)
	if err != nil {
		return early, nil, err
	}
	if err := fr.WriteData(1, true, []byte(reviewBody)); err != nil && len(early) == 0 {
		return early, nil, err
	}
	after, err = readUntil(e.timeout)
	if err != nil {
		return early, after, err
	}
	more, _ := readUntil(200 * time.Millisecond) // a reset after the answer
	return early, append(after, more...), nil
}

// h2Frame is what one frame of stream 1 said.
type h2Frame struct {
	status int    // HEADERS: :status
	data   []byte // DATA
	reset  string // RST_STREAM: its code
	end    bool   // the stream ends with it
}

// h2Answer reads stream 1's frames: the status, the body, and the reset's
// code if the server reset the stream.
func h2Answer(frames []h2Frame) (code int, body, reset string) {
	var b strings.Builder
	for _, f := range frames {
		if f.status != 0 && code == 0 {
			code = f.status
		}
		b.Write(f.data)
		if f.reset != "" {
			reset = f.reset
		}
	}
	return code, b.String(), reset
}

// statusMessage is the message of a metav1.Status answer ("" for any
// other body).
func statusMessage(body []byte) string {
	var s metav1.Status
	if json.Unmarshal(body, &s) != nil || s.Kind != "Status" {
		return ""
	}
	return s.Message
}
