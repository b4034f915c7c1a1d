package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kstep-dev/kstep/cluster/failpoint"
)

// failpoints is the armed state.
type failpoints struct {
	mu sync.Mutex
	// drop: resource → the User-Agent substring and how many events left.
	drop map[string]dropArm
}

type dropArm struct {
	UserAgent string `json:"userAgent"`
	Left      int    `json:"left"`
	Dropped   int    `json:"dropped"`
}

// dropEvent reports whether the event a watch stream of resource for
// userAgent is about to send is to be dropped, and counts it.
func (f *failpoints) dropEvent(resource, userAgent string) bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.drop[resource]
	if !ok || a.Left == 0 || !strings.Contains(userAgent, a.UserAgent) {
		return false
	}
	a.Left--
	a.Dropped++
	f.drop[resource] = a
	return true
}

func (s *Server) serveFailpoints(w http.ResponseWriter, r *http.Request) {
	f := s.failpoints
	name := strings.Trim(strings.TrimPrefix(r.URL.Path, failpoint.Path), "/")
	q := r.URL.Query()
	bad := func(format string, a ...any) {
		http.Error(w, "failpoints: "+fmt.Sprintf(format, a...), http.StatusBadRequest)
	}
	resource := q.Get("resource")
	if resource != "" {
		if _, ok := s.cachers[resource]; !ok {
			bad("no watch cache of resource %q", resource)
			return
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && name == "":
	case name == failpoint.FreezeWatchCache && (r.Method == http.MethodPost || r.Method == http.MethodDelete):
		d := time.Duration(0)
		if r.Method == http.MethodPost {
			var err error
			if d, err = time.ParseDuration(q.Get("for")); err != nil || d <= 0 || d > failpoint.MaxFor {
				bad("for=%q: want a duration in (0, %v]", q.Get("for"), failpoint.MaxFor)
				return
			}
		}
		for res, c := range s.cachers {
			if resource == "" || res == resource {
				c.Freeze(d)
			}
		}
		s.log.Warn("failpoint", "name", name, "for", d, "resource", resource)
	case name == failpoint.DropWatchEvent && r.Method == http.MethodPost:
		n := 1
		if c := q.Get("count"); c != "" {
			var err error
			if n, err = strconv.Atoi(c); err != nil || n < 1 || n > failpoint.MaxCount {
				bad("count=%q: want 1 to %d", c, failpoint.MaxCount)
				return
			}
		}
		if resource == "" || q.Get("userAgent") == "" {
			bad("drop-watch-event needs resource and userAgent")
			return
		}
		f.drop[resource] = dropArm{UserAgent: q.Get("userAgent"), Left: n}
		s.log.Warn("failpoint", "name", name, "resource", resource, "userAgent", q.Get("userAgent"), "count", n)
	case name == failpoint.DropWatchEvent && r.Method == http.MethodDelete:
		if resource == "" {
			clear(f.drop)
		} else {
			delete(f.drop, resource)
		}
	default:
		http.Error(w, fmt.Sprintf("failpoints: GET %s, POST or DELETE %s/%s or %s/%s", failpoint.Path, failpoint.Path, failpoint.FreezeWatchCache,
			failpoint.Path, failpoint.DropWatchEvent), http.StatusNotFound)
		return
	}
	frozen := map[string]string{}
	for res, c := range s.cachers {
		if left := c.FrozenFor(); left > 0 {
			frozen[res] = left.Round(time.Millisecond).String()
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"frozen": frozen, "drop": f.drop})
}
