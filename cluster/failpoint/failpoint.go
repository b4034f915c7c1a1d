package failpoint

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Path is where an apiserver started with --enable-failpoints (testing
// only) takes its failpoints, admin only through RBAC like
// netfault.ControlPath:
//
//   - POST Path/freeze-watch-cache?for=2s[&resource=configmaps]
//     freezes the watch caches (one resource's, or all): for that long they
//     apply nothing from etcd and consistent LISTs are served from them
//     without waiting until they are fresh — stale reads. DELETE thaws.
//   - POST Path/drop-watch-event?resource=pods&userAgent=S[&count=1]
//     drops the next count events (not bookmarks) of the watch streams of
//     resource whose User-Agent contains S: each dropped event goes to no
//     one of them. DELETE disarms.
//
// GET Path says what is armed.
const Path = "/kstep/failpoints"

// The failpoints.
const (
	FreezeWatchCache = "freeze-watch-cache"
	DropWatchEvent   = "drop-watch-event"
)

// MaxFor and MaxCount bound one request's effect: a freeze's for, a drop's
// count.
const (
	MaxFor   = time.Minute
	MaxCount = 100
)

// Arm is one failpoint and its parameters.
type Arm struct {
	Name string
	// Resource: the watch cache frozen ("" all) or the resource whose
	// events are dropped.
	Resource string
	// For is how long FreezeWatchCache freezes.
	For time.Duration
	// UserAgent and Count: DropWatchEvent drops the next Count events (0:
	// the apiserver's default, one) of the streams whose User-Agent
	// contains UserAgent.
	UserAgent string
	Count     int
}

// query is a's parameters for arming (on) or disarming it.
func (a Arm) query(on bool) url.Values {
	q := url.Values{}
	if a.Resource != "" {
		q.Set("resource", a.Resource)
	}
	if !on {
		return q
	}
	switch a.Name {
	case FreezeWatchCache:
		q.Set("for", a.For.String())
	case DropWatchEvent:
		q.Set("userAgent", a.UserAgent)
		if a.Count > 0 {
			q.Set("count", strconv.Itoa(a.Count))
		}
	}
	return q
}

// requestTimeout bounds one request to an apiserver's failpoints.
const requestTimeout = 5 * time.Second

// Client arms and disarms the failpoints of the apiserver at Base, over
// HC (the admin's: the path is admin only).
type Client struct {
	HC   *http.Client
	Base string
}

// Set arms a (on) or disarms it.
func (c Client) Set(ctx context.Context, a Arm, on bool) error {
	method := http.MethodDelete
	if on {
		method = http.MethodPost
	}
	u := strings.TrimSuffix(c.Base, "/") + Path + "/" + a.Name + "?" + a.query(on).Encode()
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, method, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.HC.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s (is it started with --enable-failpoints?)", resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
