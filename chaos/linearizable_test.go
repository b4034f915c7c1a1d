package chaos

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var linInit0 = []LinOp{{Key: "lin-0", RV: 10, Got: "init"}}

func get(client int, call, ret int64, rv int64, v string) LinOp {
	return LinOp{Client: client, Kind: LinGet, Key: "lin-0", Call: call, Return: ret, RV: rv, Got: v}
}

func list(client int, call, ret int64, rv int64, v string) LinOp {
	o := get(client, call, ret, rv, v)
	o.Kind = LinList
	return o
}

func cas(client int, call, ret int64, expect int64, v, outcome string, rv int64) LinOp {
	return LinOp{Client: client, Kind: LinCAS, Key: "lin-0", Call: call, Return: ret, ExpectRV: expect, Value: v, Outcome: outcome, RV: rv}
}

func TestCheckLinearizable(t *testing.T) {
	for _, tc := range []struct {
		name string
		ops  []LinOp
		ok   bool
	}{
		{"reads and a write in order", []LinOp{get(1, 0, 1, 10, "init"), cas(1, 2, 3, 10, "a", LinOK, 11), list(2, 4, 5, 11, "a")}, true},
		{"a read concurrent with the write may see either", []LinOp{cas(1, 2, 6, 10, "a", LinOK, 11), list(2, 3, 4, 10, "init"), get(3, 3, 5, 11, "a")}, true},
		{"a stale list after the write returned", []LinOp{cas(1, 2, 3, 10, "a", LinOK, 11), list(2, 4, 5, 10, "init")}, false},
		{"a conflict for the version the object had", []LinOp{cas(1, 2, 3, 10, "a", LinConflict, 0), get(2, 4, 5, 10, "init")}, false},
		{"a conflict for a version gone", []LinOp{cas(1, 0, 1, 10, "a", LinOK, 11), cas(2, 2, 3, 10, "b", LinConflict, 0)}, true},
		{"an unknown write that took effect", []LinOp{cas(1, 0, 1, 10, "a", LinUnknown, 0), get(2, 5, 6, 12, "a"), cas(2, 7, 8, 12, "b", LinOK, 13)}, true},
		{"an unknown write that did not", []LinOp{cas(1, 0, 1, 10, "a", LinUnknown, 0), get(2, 5, 6, 10, "init")}, true},
		{"an unknown write seen, then unseen", []LinOp{cas(1, 0, 1, 10, "a", LinUnknown, 0), get(2, 5, 6, 12, "a"), get(2, 7, 8, 10, "init")}, false},
		{"two writes from one version", []LinOp{cas(1, 0, 1, 10, "a", LinOK, 11), cas(2, 2, 3, 10, "b", LinOK, 12)}, false},
		{"a list that lost the object", []LinOp{{Client: 1, Kind: LinList, Key: "lin-0", Call: 0, Return: 1, Absent: true}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			inv, st := CheckLinearizable(linInit0, tc.ops, LinStats{Clients: 3, Objects: 1, APIServers: 2}, 0, dir)
			if inv.OK() != tc.ok {
				t.Fatalf("ok %v, want %v: %s %v", inv.OK(), tc.ok, inv.Summary, inv.Detail)
			}
			if st.Operations != len(tc.ops) {
				t.Errorf("operations %d, want %d", st.Operations, len(tc.ops))
			}
			if tc.ok {
				if st.Visualization != "" {
					t.Errorf("a visualization for a linearizable history: %s", st.Visualization)
				}
				return
			}
			if st.Visualization == "" {
				t.Fatalf("no visualization: %v", inv.Detail)
			}
			b, err := os.ReadFile(filepath.Join(dir, st.Visualization))
			if err != nil || !strings.Contains(string(b), "<html") {
				t.Errorf("visualization: %v, %d bytes", err, len(b))
			}
			if !strings.Contains(inv.Detail[0], "lin-0") || !strings.Contains(inv.Detail[0], "none fits: client") {
				t.Errorf("the operation is not named: %v", inv.Detail)
			}
		})
	}
	if inv, _ := CheckLinearizable(linInit0, nil, LinStats{}, 0, ""); inv.Checked {
		t.Error("checked with no operation")
	}
}

// linHistory simulates n operations of clients on objects against a
// linearizable register, each operation's effect at a moment inside its
// interval; stale, if set, makes one list return the state before the
// write that preceded it.
func linHistory(n, clients, objects int, seed uint64) (inits, ops []LinOp) {
	rng := rand.New(rand.NewPCG(seed, 1))
	type obj struct {
		rv int64
		v  string
	}
	state := make([]obj, objects)
	rv := int64(100)
	for i := range state {
		rv++
		state[i] = obj{rv, "init"}
		inits = append(inits, LinOp{Key: linName(i), RV: rv, Got: "init"})
	}
	last := make([]map[int]int64, clients)
	busyUntil := make([]int64, clients)
	for i := range last {
		last[i] = map[int]int64{}
	}
	var now int64
	for i := 0; i < n; i++ {
		now += int64(rng.IntN(3)) + 1
		c := rng.IntN(clients)
		if busyUntil[c] >= now {
			continue
		}
		k := rng.IntN(objects)
		call, at := now-int64(rng.IntN(5)), now
		ret := now + int64(rng.IntN(5))
		busyUntil[c] = ret
		o := LinOp{Client: c, Key: linName(k), Call: max(call, busyUntil[c]-10), Return: ret}
		switch {
		case rng.IntN(3) == 0 && last[c][k] != 0:
			o.Kind, o.ExpectRV, o.Value = LinCAS, last[c][k], fmt.Sprintf("c%d-%d", c, i)
			switch {
			case rng.IntN(20) == 0:
				o.Outcome = LinUnknown
				if rng.IntN(2) == 0 && state[k].rv == o.ExpectRV {
					rv++
					state[k] = obj{rv, o.Value}
				}
			case state[k].rv == o.ExpectRV:
				rv++
				state[k] = obj{rv, o.Value}
				o.Outcome, o.RV = LinOK, rv
				last[c][k] = rv
			default:
				o.Outcome = LinConflict
			}
		default:
			o.Kind = []string{LinGet, LinList}[rng.IntN(2)]
			o.RV, o.Got = state[k].rv, state[k].v
			last[c][k] = o.RV
		}
		_ = at
		ops = append(ops, o)
	}
	return inits, ops
}

func TestCheckLinearizableSimulated(t *testing.T) {
	inits, ops := linHistory(3000, 6, 3, 7)
	inv, st := CheckLinearizable(inits, ops, LinStats{Clients: 6, Objects: 3}, 0, "")
	if !inv.OK() {
		t.Fatalf("a simulated linearizable history: %s %v", inv.Summary, inv.Detail)
	}
	if st.CASOK == 0 || st.CASConflict == 0 || st.CASUnknown == 0 {
		t.Errorf("the simulation lacks an outcome: %+v", st)
	}
}

// BenchmarkCheckLinearizable is the checker's cost per 10,000 operations
// of the workload's shape (clients on 3 objects, a third CAS, 1 in 20 of
// them unknown).
func BenchmarkCheckLinearizable(b *testing.B) {
	inits, ops := linHistory(14000, 4, 3, 11)
	ops = ops[:min(len(ops), 10000)]
	b.ResetTimer()
	for range b.N {
		inv, st := CheckLinearizable(inits, ops, LinStats{}, 0, "")
		if !inv.OK() {
			b.Fatalf("%s %v", inv.Summary, inv.Detail)
		}
		b.ReportMetric(st.CheckCPUMS, "cpu-ms/10k-ops")
	}
}
