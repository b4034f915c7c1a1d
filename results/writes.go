package results

import (
	"fmt"
	"sort"
	"strings"
)

// EventsResource is how run.json's api rows name core/v1 Events (group
// empty), the ones kubelets, schedulers and controllers write through
// client-go's recorder: a create for a new Event, a patch of its count
// for each repeat.
const EventsResource = "events"

// WriteRow is one resource's write requests in a run, from its api rows:
// every create, update, patch and delete (deletecollection among the
// deletes) the apiservers answered, whatever the answer.
type WriteRow struct {
	Resource                           string
	Creates, Updates, Patches, Deletes uint64
}

// Total is the row's writes.
func (w WriteRow) Total() uint64 { return w.Creates + w.Updates + w.Patches + w.Deletes }

// IsEvents reports whether the row is Events (core/v1 or events.k8s.io).
func (w WriteRow) IsEvents() bool {
	return w.Resource == EventsResource || w.Resource == "events.k8s.io/events"
}

// Writes sums the run's api rows by resource over the write verbs, busiest
// first (ties by name), and returns the total over every resource and the
// Events' part of it. The apiservers count from their start, so the figures
// cover the cluster's start-up (node registration) as well as the load.
func (r *Run) Writes() (rows []WriteRow, total, events uint64) {
	by := map[string]*WriteRow{}
	for _, a := range r.API {
		row := by[a.Resource]
		if row == nil {
			row = &WriteRow{Resource: a.Resource}
		}
		switch a.Verb {
		case "create":
			row.Creates += a.Count
		case "update":
			row.Updates += a.Count
		case "patch":
			row.Patches += a.Count
		case "delete", "deletecollection":
			row.Deletes += a.Count
		default:
			continue
		}
		by[a.Resource] = row
	}
	for _, row := range by {
		rows = append(rows, *row)
		total += row.Total()
		if row.IsEvents() {
			events += row.Total()
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Total() != rows[j].Total() {
			return rows[i].Total() > rows[j].Total()
		}
		return rows[i].Resource < rows[j].Resource
	})
	return rows, total, events
}

// HollowEventsText says whether the run's hollow nodes wrote Events, or ""
// for a run without hollow nodes or without the record.
func (r *Run) HollowEventsText() string {
	t := r.Cluster.Topology
	if t.HollowNodes == 0 || t.HollowEvents == nil {
		return ""
	}
	if *t.HollowEvents {
		return "hollow-node Events: on (Pulling, Pulled, Created, Started, … as real kubelets write them)"
	}
	return "hollow-node Events: off (the control plane without the kubelets' Events)"
}

var writesHeader = []any{"resource", "create", "update", "patch", "delete", "writes", "per pod", "share"}

// writesRows is the writes-per-pod table: each resource, Events marked,
// then the Events and all rows; nil without pods or write rows.
func writesRows(r *Run, limit int) [][]string {
	rows, total, events := r.Writes()
	if r.CostPods() == 0 || total == 0 {
		return nil
	}
	per := func(n uint64) string { return fmt.Sprintf("%.2f", float64(n)/float64(r.CostPods())) }
	share := func(n uint64) string { return fmt.Sprintf("%.1f %%", 100*float64(n)/float64(total)) }
	var out [][]string
	for i, w := range rows {
		if limit > 0 && i == limit {
			break
		}
		name := w.Resource
		if w.IsEvents() {
			name += " (Events)"
		}
		out = append(out, []string{name, fmt.Sprint(w.Creates), fmt.Sprint(w.Updates), fmt.Sprint(w.Patches), fmt.Sprint(w.Deletes),
			fmt.Sprint(w.Total()), per(w.Total()), share(w.Total())})
	}
	out = append(out,
		[]string{"Events, all kinds", "", "", "", "", fmt.Sprint(events), per(events), share(events)},
		[]string{"all writes", "", "", "", "", fmt.Sprint(total), per(total), share(total)},
		[]string{"all but Events", "", "", "", "", fmt.Sprint(total - events), per(total - events), share(total - events)})
	return out
}

// writesSentence is the writes per pod in one line, Events apart.
func writesSentence(r *Run) string {
	_, total, events := r.Writes()
	if r.CostPods() == 0 || total == 0 {
		return ""
	}
	p := float64(r.CostPods())
	return fmt.Sprintf("writes per pod: %.2f, of which Events %.2f (%.1f %%); %.2f without Events",
		float64(total)/p, float64(events)/p, 100*float64(events)/float64(total), float64(total-events)/p)
}

const writesIntro = "Every write request (create, update, patch, delete) the apiservers answered, whatever the answer, by resource, from their `/metrics` at the end of the load (so the cluster's start-up is in it), divided by the run's pods. Events are rows of their own: the recorder creates an Event once and patches its count on each repeat."

func writeWritesMD(b *strings.Builder, r *Run) {
	rows := writesRows(r, 0)
	if rows == nil {
		return
	}
	b.WriteString("\n## Writes per pod\n\n" + writesIntro + "\n\n")
	if t := r.HollowEventsText(); t != "" {
		b.WriteString(t + ".\n\n")
	}
	mdTable(b, writesHeader, rows)
	b.WriteString("\n" + asSentence(writesSentence(r)) + "\n")
}

// isWriteVerb reports whether an api row's verb writes.
func isWriteVerb(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// WriteTime splits the time the apiservers spent answering writes: the API
// writes' total (every write verb of the api rows) and, within it, etcd's
// writes' (the create, update and delete rows of EtcdRequests), both in ms
// and both counted from the apiservers' start, with the number of API
// writes. ok is false when the run lacks either side.
func (r *Run) WriteTime() (apiMS, etcdMS float64, writes uint64, ok bool) {
	for _, a := range r.API {
		if isWriteVerb(a.Verb) {
			apiMS += a.MeanMS * float64(a.Count)
			writes += a.Count
		}
	}
	for _, e := range r.EtcdRequests {
		if isWriteVerb(e.Verb) {
			etcdMS += e.MeanMS * float64(e.Count)
		}
	}
	return apiMS, etcdMS, writes, writes > 0 && apiMS > 0 && len(r.EtcdRequests) > 0
}

// writeTimeSentence says what part of an API write's mean latency was
// etcd's, or "" without the record.
func writeTimeSentence(r *Run) string {
	apiMS, etcdMS, n, ok := r.WriteTime()
	if !ok {
		return ""
	}
	per := float64(n)
	return fmt.Sprintf("an API write took %s ms on average over %d writes, of which etcd's writes %s ms (%.0f %%), the rest the apiserver's own work (decode, admission, managed fields, encode) and etcd reads",
		fmtMS(apiMS/per), n, fmtMS(etcdMS/per), 100*etcdMS/apiMS)
}
