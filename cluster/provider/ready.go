package provider

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// readyTransport is the HTTP transport for actors' health endpoints: no proxy,
// no connection reuse between probes, and a short timeout so a hung actor is
// seen as not ready rather than stalling the wait. An apiserver's /readyz
// is served over TLS and is public; the probe checks readiness, not
// identity, so it does not verify the serving certificate (every client
// that sends credentials does).
var readyTransport = &http.Transport{Proxy: nil, DisableKeepAlives: true,
	TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}

func probe(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := readyTransport.RoundTrip(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// WaitReady polls readyURL until it answers 200, as Up and Start do for
// every actor. It fails early when exited reports that the actor is gone
// (and why), and after timeout; both errors name the actor and carry the
// tail of its log (a.LogPath).
func WaitReady(ctx context.Context, a Actor, readyURL string, timeout time.Duration, exited func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	var last error
	for {
		if last = probe(ctx, readyURL); last == nil {
			return nil
		}
		if gone, why := exited(); gone {
			return fmt.Errorf("%s: exited before it was ready (%v)%s", a.Name, why, LogTail(a.LogPath))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not ready after %v: %v%s", a.Name, timeout, last, LogTail(a.LogPath))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: waiting for readiness: %w", a.Name, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// LogTail returns the last lines of an actor's log, formatted to follow an
// error message.
func LogTail(path string) string {
	const maxBytes, maxLines = 4096, 20
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(st.Size()-maxBytes, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return ""
	}
	lines := strings.Split(string(bytes.TrimRight(buf, "\n")), "\n")
	if off > 0 && len(lines) > 1 {
		lines = lines[1:] // the first line is cut
	}
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return fmt.Sprintf("; log %s is empty", path)
	}
	return fmt.Sprintf("; last lines of %s:\n\t%s", path, strings.Join(lines, "\n\t"))
}
