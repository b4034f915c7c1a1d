package prober

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
)

// Net probes over the host's network, as upstream's kubelet does: HTTP GET
// succeeds on a status in [200, 400), TCP on an accepted connection.
type Net struct {
	client *http.Client
}

var _ Network = (*Net)(nil)

// NewNet returns a real-network prober. Connections are not reused (each
// probe is a fresh connection, as upstream) and certificates are not
// verified (a probe checks liveness, not identity).
func NewNet() *Net {
	tr := &http.Transport{
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // probes do not verify, as upstream
		Proxy:             nil,
	}
	return &Net{client: &http.Client{
		Transport: tr,
		// Redirects to the same host are followed; to another host the
		// redirect itself counts as success, as upstream.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 || req.URL.Hostname() != via[0].URL.Hostname() {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}}
}

// HTTPGet implements Network.
func (n *Net) HTTPGet(ctx context.Context, r HTTPRequest) (Result, string) {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	scheme := r.Scheme
	if scheme == "" {
		scheme = "http"
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(r.Host, strconv.Itoa(r.Port)), Path: r.Path}
	if p, err := url.Parse(r.Path); err == nil { // keep a query string
		u.Path, u.RawQuery = p.Path, p.RawQuery
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Unknown, err.Error()
	}
	req.Header.Set("User-Agent", "kube-probe/kstep")
	req.Header.Set("Accept", "*/*")
	for k, vs := range r.Header {
		if http.CanonicalHeaderKey(k) == "Host" && len(vs) > 0 {
			req.Host = vs[0]
			continue
		}
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	resp, err := n.client.Do(req)
	if err != nil {
		return Failure, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 10<<10))
	if resp.StatusCode >= 200 && resp.StatusCode < 400 {
		return Success, ""
	}
	return Failure, fmt.Sprintf("HTTP probe failed with statuscode: %d %s", resp.StatusCode, truncate(body))
}

// TCPConnect implements Network.
func (n *Net) TCPConnect(ctx context.Context, r TCPRequest) (Result, string) {
	d := net.Dialer{Timeout: r.Timeout}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(r.Host, strconv.Itoa(r.Port)))
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return Failure, "dial timeout: " + err.Error()
		}
		return Failure, err.Error()
	}
	_ = conn.Close()
	return Success, ""
}

func truncate(b []byte) string {
	if len(b) > 256 {
		b = b[:256]
	}
	return string(b)
}
