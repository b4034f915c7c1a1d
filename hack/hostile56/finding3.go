package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// metricsSnapshot is /metrics as the admin reads it: its series (every
// line that is not a comment) and its size.
type metricsSnapshot struct {
	series map[string]bool
	bytes  int
	err    error
}

func (e *env) metrics() metricsSnapshot {
	code, b, err := do(e.adminHTTP, "GET", e.host+"/metrics", "", nil)
	if err == nil && code != 200 {
		err = fmt.Errorf("/metrics: HTTP %d", code)
	}
	if err != nil {
		return metricsSnapshot{err: err}
	}
	return metricsSnapshot{series: seriesOf(string(b)), bytes: len(b)}
}

// seriesOf is the set of series of a Prometheus text exposition: each
// sample line's name and labels, without its value.
func seriesOf(text string) map[string]bool {
	s := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if i := strings.LastIndexByte(l, '}'); i >= 0 {
			l = l[:i+1]
		} else if f := strings.Fields(l); len(f) > 0 {
			l = f[0]
		}
		s[l] = true
	}
	return s
}

// hostileLabel matches a label value only the hostile paths of finding 3
// carry: their groups, resources, subresources and versions.
var hostileLabel = regexp.MustCompile(`\.evil|"r[0-9]+|"sub[0-9]+|v[0-9]+beta0|nnnnnnnn`)

// grown says how the series of after differ from before: how many are
// new, and whether any carries a label the caller chose.
func grown(before, after metricsSnapshot) (added []string, hostile int) {
	for s := range after.series {
		if !before.series[s] {
			added = append(added, s)
			if hostileLabel.MatchString(s) {
				hostile++
			}
		}
	}
	sort.Strings(added)
	return added, hostile
}

// unservedPaths are the paths of the i-th round of finding 3: an unknown
// group, an unknown resource in a namespace, an unknown subresource, an
// aggregated group kstep does not serve, an unknown version, and a long
// unknown name.
func unservedPaths(ns string, i int, long string) []string {
	return []string{
		fmt.Sprintf("/apis/g%d.evil/v1/r%d", i, i),
		fmt.Sprintf("/api/v1/namespaces/%s/r%d", ns, i),
		fmt.Sprintf("/api/v1/namespaces/%s/configmaps/victim/sub%d", ns, i),
		fmt.Sprintf("/apis/metrics.k8s.io/v1beta1/r%d", i),
		fmt.Sprintf("/apis/apps/v%dbeta0/deployments", i),
		fmt.Sprintf("/api/v1/r%d%s", i, long),
	}
}

// finding3: requests were recorded with the group and resource the caller
// typed, before the 404: 300 GETs of /apis/g<N>.evil/v1/r<N> added 5,717
// lines to /metrics, 50,000 grew it to 273 MB.
func (e *env) finding3() {
	var before, mid, after metricsSnapshot
	e.step("3", "admin", "GET /metrics (before)", func() string {
		before = e.metrics()
		return httpStatus(200, nil, before.err)
	}, func() (string, bool) {
		return fmt.Sprintf("%d series, %d bytes", len(before.series), before.bytes), before.err == nil
	})
	// maxNew is how many series a round may add: the first requests of
	// each verb and status to an unserved path add their series once,
	// with group and resource empty; a round after that adds none.
	check := func(from metricsSnapshot, to *metricsSnapshot, st *statuses, maxNew int) func() (string, bool) {
		return func() (string, bool) {
			*to = e.metrics()
			if to.err != nil {
				return to.err.Error(), false
			}
			added, hostile := grown(from, *to)
			empty := 0
			for _, a := range added {
				if strings.Contains(a, `group=""`) && strings.Contains(a, `resource=""`) {
					empty++
				}
			}
			s := fmt.Sprintf("/metrics: %d → %d series, %d → %d bytes; %d new series (%d of them with group and resource empty), %d naming a path the caller chose",
				len(from.series), len(to.series), from.bytes, to.bytes, len(added), empty, hostile)
			if len(added) > 0 {
				s += fmt.Sprintf(" (new: %s)", excerpt(strings.Join(added, " "), 200))
			}
			return s, hostile == 0 && len(added) <= maxNew && st.only(403, 404, 405)
		}
	}
	st := &statuses{}
	e.step("3", "alice", "300 × GET /apis/g<N>.evil/v1/r<N> (8 at once)", func() string {
		parallel(300, 8, func(i int) {
			code, _, err := do(e.aliceHTTP, "GET", fmt.Sprintf("%s/apis/g%d.evil/v1/r%d", e.host, i, i), "", nil)
			st.add(code, err)
		})
		return st.String()
	}, check(before, &mid, st, 50))

	const rounds = 10000 / 6
	long := strings.Repeat("n", 20<<10)
	unserved := func(from int, st *statuses) func() string {
		return func() string {
			parallel(rounds, 8, func(i int) {
				i += from
				for j, p := range unservedPaths(e.ns, i, long) {
					method := []string{"GET", "POST", "DELETE"}[(i+j)%3]
					var body []byte
					if method != "GET" {
						body = []byte("{}")
					}
					code, _, err := do(e.aliceHTTP, method, e.host+p, "application/json", body)
					st.add(code, err)
				}
			})
			return st.String()
		}
	}
	what := fmt.Sprintf("%d unserved paths (%d rounds of: unknown group, resource, subresource, aggregated group, version, 20 KB name; GET/POST/DELETE; 8 at once)", rounds*6, rounds)
	st = &statuses{}
	e.step("3", "alice", what, unserved(1000, st), check(mid, &after, st, 50))
	st = &statuses{}
	var again metricsSnapshot
	e.step("3", "alice", "the same again, other names: "+what, unserved(1000+rounds, st), check(after, &again, st, 0))
}
