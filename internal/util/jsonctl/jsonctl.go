package jsonctl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxAnswer bounds how much of an answer is read.
const maxAnswer = 1 << 20

// Call sends method base+path with body (nil for none) over hc (nil:
// http.DefaultClient) and decodes a 200's JSON answer into out. A 404
// wraps notFound with the answer's text; any other status is an error
// naming the request and quoting the answer.
func Call(ctx context.Context, hc *http.Client, method, base, path string, body []byte, out any, notFound error) error {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(base, "/")+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	text := strings.TrimSpace(string(b))
	switch {
	case resp.StatusCode == http.StatusOK:
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s%s: %w", method, base, path, err)
		}
		return nil
	case resp.StatusCode == http.StatusNotFound && notFound != nil:
		return fmt.Errorf("%s%s: %s: %w", base, path, text, notFound)
	}
	return fmt.Errorf("%s %s%s: %s: %s", method, base, path, resp.Status, text)
}
