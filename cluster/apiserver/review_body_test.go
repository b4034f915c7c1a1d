package apiserver_test

import (
	"bytes"
	"crypto/tls"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"k8s.io/client-go/rest"
)

// A SelfSubjectReview over HTTP/2 (kubectl auth whoami) is answered only
// once its body has arrived: answered before, the server reset the stream
// the client was still sending on, and the client's request failed now and
// then (#56 6c). On one raw HTTP/2 connection: the request's headers, then
// (after the answer or 1 s, whichever first) its body; the answer must come
// after the body, whole, and with no RST_STREAM. A body too large is a 413,
// a malformed one a 400.
func TestSelfSubjectReviewReadsItsBody(t *testing.T) {
	e := newSecureEnv(t)
	const path = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
	body := `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview","metadata":{"creationTimestamp":null},"status":{"userInfo":{}}}`
	for _, tc := range []struct {
		name, body string
		code       int
		want       string
	}{
		{"kubectl's review", body, 201, `"username":"bob"`},
		{"an empty body", ``, 201, `"username":"bob"`},
		{"a malformed body", `{"kind":`, 400, "could not be decoded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := h2Dial(t, e.api.Config)
			const stream = 1
			c.headers(stream, "POST", path, "bob-token", len(tc.body))
			early := c.readUntil(stream, time.Second) // on a fixed server: nothing before the body
			c.data(stream, tc.body)
			wait := time.Minute
			if ended(early) {
				wait = time.Second // the reset that follows an early answer
			}
			resp := append(early, c.readUntil(stream, wait)...)
			if !ended(resp) {
				t.Fatalf("no answer within %v: %d frames", wait, len(resp))
			}
			resp = append(resp, c.readUntil(stream, 200*time.Millisecond)...) // a reset after the answer
			code, got, reset, headersFirst := h2Response(resp)
			if !headersFirst || code != tc.code || !strings.Contains(got, tc.want) {
				t.Fatalf("HTTP %d, want %d with %q: %.300s", code, tc.code, tc.want, got)
			}
			if len(early) > 0 {
				t.Errorf("%d frames answered before the body was sent", len(early))
			}
			if reset != nil {
				t.Errorf("the server reset the stream: %v", reset)
			}
		})
	}

	// And through client-go's own HTTP/2 client: a body over the limit is
	// a 413, and many reviews at once all answer.
	hc, err := rest.HTTPClientFor(e.pki.TokenConfig(e.api.Config, "bob-token"))
	if err != nil {
		t.Fatal(err)
	}
	for _, length := range []bool{true, false} {
		big := strings.NewReader(`{"metadata":{"name":"` + strings.Repeat("x", 4<<20) + `"}}`)
		req, _ := http.NewRequest("POST", e.api.Config.Host+path, big)
		if !length { // the server reads up to its limit
			req.ContentLength, req.Body = -1, io.NopCloser(big)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("a review over the limit: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 413 || !strings.Contains(string(b), "limit is") {
			t.Errorf("a review over the limit (length sent: %v): HTTP %d: %.300s", length, resp.StatusCode, b)
		}
	}
	errs := make(chan error, 50)
	for range 50 {
		go func() {
			resp, err := hc.Post(e.api.Config.Host+path, "application/json", strings.NewReader(body))
			if err == nil {
				var b bytes.Buffer
				_, err = b.ReadFrom(resp.Body)
				resp.Body.Close()
				if err == nil && (resp.StatusCode != 201 || resp.ProtoMajor != 2) {
					err = &url.Error{Op: resp.Proto, URL: strconv.Itoa(resp.StatusCode), Err: http.ErrNotSupported}
				}
			}
			errs <- err
		}()
	}
	for range 50 {
		if err := <-errs; err != nil {
			t.Errorf("SelfSubjectReview: %v", err)
		}
	}
}

// h2Conn is a raw HTTP/2 connection to the apiserver.
type h2Conn struct {
	t      *testing.T
	conn   *tls.Conn
	fr     *http2.Framer
	frames chan http2.Frame
	wmu    sync.Mutex // the framer's writes: the reader acks settings
}

// write runs fn, a write of the framer's, alone.
func (h *h2Conn) write(fn func() error) error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	return fn()
}

func h2Dial(t *testing.T, c *rest.Config) *h2Conn {
	t.Helper()
	cfg, err := rest.TLSConfigFor(c)
	if err != nil {
		t.Fatal(err)
	}
	cfg.NextProtos = []string{"h2"}
	u, err := url.Parse(c.Host)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := tls.Dial("tcp", u.Host, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("negotiated %q, want h2", p)
	}
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	h := &h2Conn{t: t, conn: conn, fr: http2.NewFramer(conn, conn), frames: make(chan http2.Frame, 64)}
	h.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if err := h.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	if err := h.fr.WriteWindowUpdate(0, 1<<30); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(h.frames)
		for {
			f, err := h.fr.ReadFrame()
			if err != nil {
				return
			}
			switch f := f.(type) {
			case *http2.SettingsFrame:
				if !f.IsAck() {
					_ = h.write(h.fr.WriteSettingsAck)
				}
				continue
			case *http2.WindowUpdateFrame, *http2.PingFrame:
				continue
			case *http2.DataFrame: // the framer reuses its buffer
				d := http2.DataFrame{FrameHeader: f.FrameHeader}
				h.frames <- &h2Data{DataFrame: d, data: append([]byte(nil), f.Data()...)}
				continue
			}
			h.frames <- f
		}
	}()
	return h
}

type h2Data struct {
	http2.DataFrame
	data []byte
}

// headers opens stream with a request's headers.
func (h *h2Conn) headers(stream uint32, method, path, token string, length int) {
	var b bytes.Buffer
	enc := hpack.NewEncoder(&b)
	for _, f := range [][2]string{{":method", method}, {":scheme", "https"}, {":authority", h.conn.RemoteAddr().String()}, {":path", path},
		{"content-type", "application/json"}, {"authorization", "Bearer " + token}, {"content-length", strconv.Itoa(length)}} {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if err := h.write(func() error {
		return h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: b.Bytes(), EndHeaders: true})
	}); err != nil {
		h.t.Fatal(err)
	}
}

// data sends body, smaller than a frame and the server's window, on
// stream, ending it.
func (h *h2Conn) data(stream uint32, body string) {
	if err := h.write(func() error { return h.fr.WriteData(stream, true, []byte(body)) }); err != nil {
		h.t.Fatal(err)
	}
}

// readUntil collects stream's frames until one ends the stream (or resets
// it), or wait passes.
func (h *h2Conn) readUntil(stream uint32, wait time.Duration) []http2.Frame {
	var out []http2.Frame
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case f, ok := <-h.frames:
			if !ok {
				return out
			}
			if f.Header().StreamID != stream {
				continue
			}
			out = append(out, f)
			_, reset := f.(*http2.RSTStreamFrame)
			if reset || f.Header().Flags.Has(http2.FlagDataEndStream) {
				return out
			}
		case <-timer.C:
			return out
		}
	}
}

// ended reports whether frames hold the end of their stream or its reset.
func ended(frames []http2.Frame) bool {
	for _, f := range frames {
		if _, reset := f.(*http2.RSTStreamFrame); reset || f.Header().Flags.Has(http2.FlagDataEndStream) {
			return true
		}
	}
	return false
}

// h2Response is the status and body of a response's frames, the reset
// among them if any, and whether its headers came first.
func h2Response(frames []http2.Frame) (int, string, *http2.RSTStreamFrame, bool) {
	code, first := 0, false
	var body strings.Builder
	var reset *http2.RSTStreamFrame
	for i, f := range frames {
		switch f := f.(type) {
		case *http2.MetaHeadersFrame:
			code, _ = strconv.Atoi(f.PseudoValue("status"))
			first = first || i == 0
		case *h2Data:
			body.Write(f.data)
		case *http2.RSTStreamFrame:
			reset = f
		}
	}
	return code, body.String(), reset, first
}
