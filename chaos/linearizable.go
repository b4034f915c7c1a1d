package chaos

import (
	"fmt"
	"hash/fnv"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/anishathalye/porcupine"
)

// InvLinearizable is the linearizability invariant's name.
const InvLinearizable = "linearizable"

// The kinds of a LinOp.
const (
	LinGet  = "get"  // a consistent GET (resourceVersion unset: etcd)
	LinList = "list" // one object of a consistent LIST (the watch cache)
	LinCAS  = "cas"  // an update with a resourceVersion precondition
	linInit = "init" // the object's state before the first operation
)

// The outcomes of a LinCAS.
const (
	LinOK       = "ok"       // 2xx: it took effect, at RV
	LinConflict = "conflict" // 409: definitely no effect
	LinUnknown  = "unknown"  // timeout, 5xx, a broken connection: it may or may not have
)

// LinOp is one operation of the linearizability workload on one object,
// with its call and return on the run's clock (ns since the workload
// began). A LIST is one LinOp per object it returned, all with the list's
// call and return: each object's projection of a linearizable list is a
// linearizable read of that object.
type LinOp struct {
	Client int `json:"client"`
	// APIServer is the apiserver the client prefers (it fails over when
	// that one is down).
	APIServer int    `json:"apiserver"`
	Kind      string `json:"kind"`
	Key       string `json:"key"`
	Call      int64  `json:"call"`
	Return    int64  `json:"return"`
	// ExpectRV and Value are a CAS's precondition and the value it writes.
	ExpectRV int64  `json:"expectRV,omitempty"`
	Value    string `json:"value,omitempty"`
	// Outcome is a CAS's (LinOK, LinConflict, LinUnknown); reads are ok.
	Outcome string `json:"outcome,omitempty"`
	// RV is what a read returned or the version a CAS wrote.
	RV int64 `json:"rv,omitempty"`
	// Got is a read's value; Absent a list that did not return the object.
	Got    string `json:"got,omitempty"`
	Absent bool   `json:"absent,omitempty"`
	Err    string `json:"err,omitempty"`
}

// linState is one object as the model has it: RV 0 after an unknown CAS
// that took effect (its version is not known until a read shows it), -1
// before the object's initial state.
type linState struct {
	RV  int64
	Val string
}

// linModel is a register with compare-and-set on the resourceVersion,
// partitioned by object. An unknown CAS may or may not have taken effect
// (the model's two next states); a conflict is a definite no-op that says
// the version was not the expected one at that moment.
var linModel = (&porcupine.NondeterministicModel{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			k := op.Input.(LinOp).Key
			if _, ok := by[k]; !ok {
				keys = append(keys, k)
			}
			by[k] = append(by[k], op)
		}
		sort.Strings(keys)
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, by[k])
		}
		return out
	},
	Init: func() []any { return []any{linState{RV: -1}} },
	Step: func(state, input, _ any) []any {
		s, op := state.(linState), input.(LinOp)
		if op.Kind == linInit {
			if s.RV != -1 {
				return nil
			}
			return []any{linState{RV: op.RV, Val: op.Got}}
		}
		if s.RV == -1 {
			return nil
		}
		switch op.Kind {
		case LinGet, LinList:
			if op.Absent {
				return nil // nothing deletes the objects
			}
			if s.Val != op.Got || (s.RV != 0 && s.RV != op.RV) {
				return nil
			}
			return []any{linState{RV: op.RV, Val: op.Got}}
		case LinCAS:
			matches := s.RV == 0 || s.RV == op.ExpectRV
			switch op.Outcome {
			case LinOK:
				if !matches {
					return nil
				}
				return []any{linState{RV: op.RV, Val: op.Value}}
			case LinConflict:
				if s.RV != 0 && s.RV == op.ExpectRV {
					return nil // it would have succeeded
				}
				return []any{s}
			default:
				if !matches {
					return []any{s}
				}
				return []any{s, linState{RV: 0, Val: op.Value}}
			}
		}
		return nil
	},
	Hash: func(state any) uint64 {
		s := state.(linState)
		h := fnv.New64a()
		fmt.Fprintf(h, "%d/%s", s.RV, s.Val)
		return h.Sum64()
	},
	DescribeOperation: func(input, _ any) string { return input.(LinOp).String() },
	DescribeState: func(state any) string {
		s := state.(linState)
		switch s.RV {
		case -1:
			return "(before)"
		case 0:
			return fmt.Sprintf("v=%s rv=?", s.Val)
		}
		return fmt.Sprintf("v=%s rv=%d", s.Val, s.RV)
	},
}).ToModel()

// String describes the operation the way the report names it.
func (o LinOp) String() string {
	who := fmt.Sprintf("client %d (apiserver %d)", o.Client, o.APIServer)
	switch o.Kind {
	case linInit:
		return fmt.Sprintf("initial v=%s rv=%d", o.Got, o.RV)
	case LinGet, LinList:
		if o.Absent {
			return fmt.Sprintf("%s %s %s → absent", who, o.Kind, o.Key)
		}
		return fmt.Sprintf("%s %s %s → v=%s rv=%d", who, o.Kind, o.Key, o.Got, o.RV)
	}
	out := o.Outcome
	if o.Outcome == LinOK {
		out = fmt.Sprintf("ok rv=%d", o.RV)
	}
	return fmt.Sprintf("%s cas %s if rv=%d set v=%s → %s", who, o.Key, o.ExpectRV, o.Value, out)
}

// LinStats is the linearizability check's figures for the report.
type LinStats struct {
	Clients    int `json:"clients"`
	Objects    int `json:"objects"`
	APIServers int `json:"apiservers"`
	// Operations are those checked: reads (gets, list reads) and CASes by
	// outcome.
	Operations  int `json:"operations"`
	Gets        int `json:"gets"`
	ListReads   int `json:"listReads"`
	Lists       int `json:"lists"`
	CASOK       int `json:"casOK"`
	CASConflict int `json:"casConflict"`
	CASUnknown  int `json:"casUnknown"`
	// FailedReads got no answer: they had no effect and are not checked.
	FailedReads int `json:"failedReads"`
	// Result is porcupine's: Ok, Illegal or Unknown (the checker timed
	// out).
	Result      string  `json:"result"`
	CheckWallMS float64 `json:"checkWallMS"`
	CheckCPUMS  float64 `json:"checkCPUMS"`
	// Visualization is porcupine's HTML of the histories that are not
	// linearizable, in the run directory.
	Visualization string `json:"visualization,omitempty"`
}

// linCheckTimeout bounds the checker: a history it cannot decide in that
// time fails the gate.
const linCheckTimeout = 2 * time.Minute

// CheckLinearizable checks the workload's history per object with
// porcupine. ops are the operations that had an answer or may have taken
// effect, inits each object's state before the first; an unknown CAS
// returns at end (it may take effect any time after its call). When the
// history is not linearizable, porcupine's visualization of the objects
// that fail is written to visDir (if set) and the operations it could
// not place are named.
func CheckLinearizable(inits []LinOp, ops []LinOp, stats LinStats, timeout time.Duration, visDir string) (Invariant, LinStats) {
	inv := Invariant{Name: InvLinearizable, Checked: true}
	if timeout <= 0 {
		timeout = linCheckTimeout
	}
	var end int64
	for _, o := range ops {
		end = max(end, o.Return)
	}
	history := make([]porcupine.Operation, 0, len(inits)+len(ops))
	for _, o := range inits {
		o.Kind = linInit
		history = append(history, porcupine.Operation{ClientId: 0, Input: o, Call: -2, Return: -1})
	}
	for _, o := range ops {
		stats.Operations++
		switch o.Kind {
		case LinGet:
			stats.Gets++
		case LinList:
			stats.ListReads++
		case LinCAS:
			switch o.Outcome {
			case LinOK:
				stats.CASOK++
			case LinConflict:
				stats.CASConflict++
			default:
				stats.CASUnknown++
				o.Return = end + 1
			}
		}
		history = append(history, porcupine.Operation{ClientId: o.Client + 1, Input: o, Call: o.Call, Return: o.Return})
	}
	if stats.Operations == 0 {
		inv.Checked = false
		inv.Detail = []string{"the workload completed no operation: nothing to check"}
		stats.Result = string(porcupine.Unknown)
		return inv, stats
	}
	wall, cpu := time.Now(), cpuTime()
	res := porcupine.CheckOperationsTimeout(linModel, history, timeout)
	stats.CheckWallMS = float64(time.Since(wall)) / float64(time.Millisecond)
	stats.CheckCPUMS = float64(cpuTime()-cpu) / float64(time.Millisecond)
	stats.Result = string(res)
	switch res {
	case porcupine.Unknown:
		inv.add("the checker did not decide within %v (porcupine: unknown)", timeout)
	case porcupine.Illegal:
		linIllegal(&inv, &stats, history, timeout, visDir)
	}
	inv.Summary = fmt.Sprintf("%d operations (%d gets, %d list reads of %d lists, CAS %d ok / %d conflict / %d unknown) by %d clients on %d objects over %d apiservers: %s in %s (%.0f ms CPU)",
		stats.Operations, stats.Gets, stats.ListReads, stats.Lists, stats.CASOK, stats.CASConflict, stats.CASUnknown, stats.Clients, stats.Objects,
		stats.APIServers, linVerdict(res), fmtDur(stats.CheckWallMS), stats.CheckCPUMS)
	return inv, stats
}

func linVerdict(r porcupine.CheckResult) string {
	switch r {
	case porcupine.Ok:
		return "linearizable"
	case porcupine.Illegal:
		return "NOT linearizable"
	}
	return "undecided"
}

// linIllegal finds the objects whose history is not linearizable, names
// for each the operation that cannot be placed after the longest
// linearizable prefix, and writes porcupine's visualization of them.
func linIllegal(inv *Invariant, stats *LinStats, history []porcupine.Operation, timeout time.Duration, visDir string) {
	var bad []porcupine.Operation
	for _, part := range linModel.Partition(history) {
		if porcupine.CheckOperationsTimeout(linModel, part, timeout) != porcupine.Illegal {
			continue
		}
		bad = append(bad, part...)
		_, info := porcupine.CheckOperationsVerbose(linModel, part, timeout)
		key := part[0].Input.(LinOp).Key
		var longest []porcupine.Operation
		for _, l := range info.PartialLinearizationsOperations() {
			for _, seq := range l {
				if len(seq) > len(longest) {
					longest = seq
				}
			}
		}
		in := map[int64]map[int]bool{}
		for _, o := range longest {
			if in[o.Call] == nil {
				in[o.Call] = map[int]bool{}
			}
			in[o.Call][o.ClientId] = true
		}
		var stuck *porcupine.Operation
		for i := range part {
			o := &part[i]
			if in[o.Call][o.ClientId] {
				continue
			}
			if stuck == nil || o.Return < stuck.Return {
				stuck = o
			}
		}
		after := "nothing"
		if n := len(longest); n > 0 {
			after = longest[n-1].Input.(LinOp).String()
		}
		if stuck == nil {
			inv.add("%s: not linearizable (%d operations)", key, len(part))
			continue
		}
		so := stuck.Input.(LinOp)
		inv.add("%s: %d of %d operations linearize, then none fits: %s [call %s, return %s] after %s",
			key, len(longest), len(part), so, linAt(so.Call), linAt(stuck.Return), after)
	}
	if visDir == "" || len(bad) == 0 {
		return
	}
	_, info := porcupine.CheckOperationsVerbose(linModel, bad, timeout)
	name := "linearizability.html"
	if err := porcupine.VisualizePath(linModel, info, filepath.Join(visDir, name)); err != nil {
		inv.Detail = append(inv.Detail, "visualization: "+err.Error())
		return
	}
	stats.Visualization = name
	inv.Detail = append(inv.Detail, "porcupine's visualization: "+name)
}

func linAt(ns int64) string {
	return fmt.Sprintf("+%.3fs", float64(ns)/1e9)
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
