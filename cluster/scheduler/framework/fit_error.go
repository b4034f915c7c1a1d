package framework

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ErrNoNodesAvailable is the cycle's error when the cluster has no node.
var ErrNoNodesAvailable = errors.New("no nodes available to schedule pods")

// Diagnosis is why no node fit.
type Diagnosis struct {
	// NodeToStatus is every rejecting node's status.
	NodeToStatus NodeToStatus
	// UnschedulablePlugins rejected the pod somewhere: the queue moves the
	// pod back only on events these plugins registered.
	UnschedulablePlugins map[string]bool
	// PreFilterMsg is set when a PreFilter rejected the pod outright.
	PreFilterMsg string
	// PostFilterMsg is what PostFilter (preemption) had to say.
	PostFilterMsg string
}

// AddPluginStatus records a rejecting plugin.
func (d *Diagnosis) AddPluginStatus(s *Status) {
	if s.Plugin() == "" || !s.IsRejected() {
		return
	}
	if d.UnschedulablePlugins == nil {
		d.UnschedulablePlugins = map[string]bool{}
	}
	d.UnschedulablePlugins[s.Plugin()] = true
}

// FitError is the cycle's result when no node fits the pod.
type FitError struct {
	Pod         *corev1.Pod
	NumAllNodes int
	Diagnosis   Diagnosis
}

// Error is upstream's message, which users grep for:
//
//	0/5 nodes are available: 2 node(s) had untolerated taint {key: value}, 3 Insufficient cpu.
//
// Each node counts once per reason; the "<count> <reason>" strings are
// sorted as strings, as upstream does.
func (f *FitError) Error() string {
	var b strings.Builder
	b.WriteString("0/")
	b.WriteString(strconv.Itoa(f.NumAllNodes))
	b.WriteString(" nodes are available:")
	if f.Diagnosis.PreFilterMsg != "" {
		fmt.Fprintf(&b, " %v.", f.Diagnosis.PreFilterMsg)
	} else {
		counts := map[string]int{}
		for _, s := range f.Diagnosis.NodeToStatus {
			for _, r := range s.Reasons() {
				counts[r]++
			}
		}
		hist := make([]string, 0, len(counts))
		for r, n := range counts {
			hist = append(hist, strconv.Itoa(n)+" "+r)
		}
		sort.Strings(hist)
		if len(hist) > 0 {
			fmt.Fprintf(&b, " %v.", strings.Join(hist, ", "))
		}
	}
	if f.Diagnosis.PostFilterMsg != "" {
		fmt.Fprintf(&b, " %v.", f.Diagnosis.PostFilterMsg)
	}
	return b.String()
}
