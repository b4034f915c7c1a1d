package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestParseProc(t *testing.T) {
	// A command with spaces and a ')' of its own: fields count from the
	// last ')'.
	stat := "4242 (kstep (a) b) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 37 0 0 20 0 12 0 100 0 0"
	cpu, err := parseStatCPU(stat)
	if err != nil || cpu != 287*clockTick {
		t.Fatalf("parseStatCPU: %v %v, want %v", cpu, err, 287*clockTick)
	}
	if _, err := parseStatCPU("4242 (kstep) S 1"); err == nil {
		t.Fatal("a short stat line parsed")
	}
	status := "Name:\tkstep\nVmPeak:\t 2000 kB\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\nThreads:\t9\n"
	rss, hwm, err := parseStatusMem(status)
	if err != nil || rss != 1024<<10 || hwm != 2048<<10 {
		t.Fatalf("parseStatusMem: %d %d %v", rss, hwm, err)
	}
	if _, _, err := parseStatusMem("Name:\tkstep\n"); err == nil {
		t.Fatal("a status without VmRSS parsed")
	}
	if clockTick != 10*time.Millisecond {
		t.Fatal("clockTick")
	}
}

func TestSeries(t *testing.T) {
	before := metricsSnapshot{series: seriesOf("# HELP a x\n# TYPE a counter\na 1\nb{group=\"\",resource=\"pods\"} 2\n")}
	after := metricsSnapshot{series: seriesOf("a 5\nb{group=\"\",resource=\"pods\"} 3\nb{group=\"g1.evil\",resource=\"r1\"} 1\nb{group=\"\",resource=\"\"} 1\n")}
	if len(before.series) != 2 || len(after.series) != 4 {
		t.Fatalf("series: %v %v", before.series, after.series)
	}
	added, hostile := grown(before, after)
	if len(added) != 2 || hostile != 1 {
		t.Fatalf("grown: %v, %d hostile", added, hostile)
	}
}

func TestContinueTokens(t *testing.T) {
	tok := forgeContinue(7, "../secrets/")
	if start, rv := decodeContinue(tok); start != "../secrets/" || rv != 7 {
		t.Fatalf("round trip: %q %d", start, rv)
	}
	if start, _ := decodeContinue("1:/registry/"); start != "" {
		t.Fatalf("the old format decoded to %q", start)
	}
}

func TestBodies(t *testing.T) {
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(wideConfigMap("w", 1000), &cm); err != nil || len(cm.Data) != 1000 {
		t.Fatalf("wideConfigMap: %v, %d keys", err, len(cm.Data))
	}
	deep := string(deepManagedFields("d", 9994))
	if strings.Count(deep, `{"f:a":`) != 9993 || !json.Valid([]byte(deep)) {
		t.Fatal("deepManagedFields: not 9,994 levels of valid JSON")
	}
	if p := unservedPaths("ns", 3, "nn"); len(p) != 6 || !hostileLabel.MatchString(`group="g3.evil"`) || p[5] != "/api/v1/r3nn" {
		t.Fatalf("unservedPaths: %q", p)
	}
}
