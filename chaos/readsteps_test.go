package chaos

import (
	"os"
	"path/filepath"
	"testing"
)

// A step is attributed to the actor whose trace file it is in: the
// schedulers stamp their role, and a scheduler leader's recovery counts
// only the standby's bindings.
func TestReadStepsAttributesByFile(t *testing.T) {
	dir := t.TempDir()
	line := `{"ts_ns":1000,"step":"pod.bound","actor":"scheduler","kind":"Pod","namespace":"n","name":"p","uid":"u"}` + "\n"
	for _, a := range []string{"scheduler-0", "scheduler-1"} {
		if err := os.WriteFile(filepath.Join(dir, a+".jsonl"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	steps, err := readSteps(dir)
	if err != nil {
		t.Logf("readSteps: %v", err) // no closing summary: a torn tail is reported, the events still read
	}
	got := map[string]int{}
	for _, s := range steps {
		got[s.Actor]++
	}
	if len(steps) != 2 || got["scheduler-0"] != 1 || got["scheduler-1"] != 1 {
		t.Fatalf("steps by actor %v (%d steps), want one each for scheduler-0 and scheduler-1", got, len(steps))
	}
}
