package results

import (
	"fmt"
	"slices"
	"strings"
)

// cpuIntro says what the actors table counts.
const cpuIntro = "CPU time (user + system) of each actor's processes as its provider accounts it: over the actor's whole life (start-up, load, teardown), and over the load alone (the accounts read when the load began and when it ended), divided by the run's pods: the cost of one pod by actor. Peak memory is over the whole life."

// CostPods is what the costs per pod (writes, CPU) divide by: every pod
// the load made (LoadPods: a capacity search's steps all together), or the
// run's pods for a run that does not record it.
func (r *Run) CostPods() int {
	if r.LoadPods > 0 {
		return r.LoadPods
	}
	return r.Pods
}

// LoadCPU is the whole cluster's CPU seconds over the load (every actor's
// LoadCPUSeconds); ok is false for a run that did not measure it.
func (r *Run) LoadCPU() (seconds float64, ok bool) {
	if r.LoadS <= 0 || len(r.Actors) == 0 {
		return 0, false
	}
	for _, a := range r.Actors {
		seconds += a.LoadCPUSeconds
	}
	return seconds, true
}

// CPUMsPerPod is the whole cluster's core-milliseconds per pod over the
// load; ok is false without the figure or without pods.
func (r *Run) CPUMsPerPod() (ms float64, ok bool) {
	s, ok := r.LoadCPU()
	if !ok || r.CostPods() == 0 {
		return 0, false
	}
	return 1000 * s / float64(r.CostPods()), true
}

// actorTable is the actors table: with the load's CPU and the cost per
// pod by actor where the run measured them, a cluster row last.
func actorTable(r *Run) ([]any, [][]string) {
	total, load := r.LoadCPU()
	if !load {
		var rows [][]string
		for _, a := range r.Actors {
			rows = append(rows, []string{a.Actor, fmt.Sprintf("%.2f", a.CPUSeconds), fmt.Sprintf("%.1f", a.PeakRSSMB)})
		}
		return []any{"actor", "cpu s", "peak rss MiB"}, rows
	}
	perPod := func(s float64) string {
		if r.CostPods() == 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f", 1000*s/float64(r.CostPods()))
	}
	share := func(s float64) string {
		if total <= 0 {
			return "–"
		}
		return fmt.Sprintf("%.1f %%", 100*s/total)
	}
	var rows [][]string
	var life float64
	for _, a := range r.Actors {
		life += a.CPUSeconds
		rows = append(rows, []string{a.Actor, fmt.Sprintf("%.2f", a.CPUSeconds), fmt.Sprintf("%.2f", a.LoadCPUSeconds),
			perPod(a.LoadCPUSeconds), share(a.LoadCPUSeconds), fmt.Sprintf("%.1f", a.PeakRSSMB)})
	}
	rows = append(rows, []string{"cluster", fmt.Sprintf("%.2f", life), fmt.Sprintf("%.2f", total), perPod(total), share(total), ""})
	return []any{"actor", "cpu s (life)", "cpu s (load)", "core-ms per pod", "share", "peak rss MiB"}, rows
}

// cpuSentence is the cost of a pod in one line, the busiest actors named,
// or "" for a run without the figure.
func cpuSentence(r *Run) string {
	ms, ok := r.CPUMsPerPod()
	if !ok {
		return ""
	}
	total, _ := r.LoadCPU()
	byCost := slices.Clone(r.Actors)
	slices.SortStableFunc(byCost, func(a, b ActorUsage) int {
		switch {
		case a.LoadCPUSeconds > b.LoadCPUSeconds:
			return -1
		case a.LoadCPUSeconds < b.LoadCPUSeconds:
			return 1
		}
		return 0
	})
	var top []string
	for i, a := range byCost {
		if i == 3 || a.LoadCPUSeconds <= 0 {
			break
		}
		top = append(top, fmt.Sprintf("%s %.2f", a.Actor, 1000*a.LoadCPUSeconds/float64(r.CostPods())))
	}
	line := fmt.Sprintf("CPU per pod over the load (%.1f s, %d pods): %.2f core-ms for the whole cluster, %.2f cores busy on average",
		r.LoadS, r.CostPods(), ms, total/r.LoadS)
	if len(top) > 0 {
		line += "; the busiest: " + strings.Join(top, ", ")
	}
	return line
}
