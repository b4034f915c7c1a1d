package results

import (
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/kstep-dev/kstep/cluster/trace"
)

// WriteRun writes run.json, steps.csv, report.md, report.html and
// metrics.prom into dir.
func WriteRun(dir string, r *Run) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("run dir: %w", err)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "run.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("run.json: %w", err)
	}
	if err := writeCSV(filepath.Join(dir, "steps.csv"), r); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(Markdown(r)), 0o644); err != nil {
		return fmt.Errorf("report.md: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.html"), []byte(HTML(r)), 0o644); err != nil {
		return fmt.Errorf("report.html: %w", err)
	}
	return writeMetrics(filepath.Join(dir, "metrics.prom"), r)
}

func writeCSV(path string, r *Run) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("steps.csv: %w", err)
	}
	w := csv.NewWriter(f)
	// nodes and simulated came with run.json v3; the columns before them
	// kept their names and order.
	_ = w.Write([]string{"step", "name", "nodes", "from", "to", "count", "p50_ms", "p90_ms", "p99_ms", "max_ms", "documented_lo_ms", "documented_hi_ms", "verdict", "simulated"})
	ms := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for _, s := range append(append([]Step(nil), r.Steps...), r.EndToEnd) {
		lo, hi := "", ""
		if s.DocumentedMS != nil {
			lo, hi = ms(s.DocumentedMS[0]), ms(s.DocumentedMS[1])
		}
		_ = w.Write([]string{s.Step, s.Name, nodesOf(s.Nodes), s.From, s.To, strconv.Itoa(s.Count), ms(s.P50), ms(s.P90), ms(s.P99), ms(s.Max), lo, hi, s.Verdict, strconv.FormatBool(s.Simulated)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("steps.csv: %w", err)
	}
	return f.Close()
}

// WriteEvents writes events (already sorted) as gzipped JSON lines.
func WriteEvents(path string, events []trace.Event) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("events: %w", err)
	}
	zw := gzip.NewWriter(f)
	enc := json.NewEncoder(zw)
	for i := range events {
		if err := enc.Encode(&events[i]); err != nil {
			f.Close()
			return fmt.Errorf("events %s: %w", path, err)
		}
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return fmt.Errorf("events %s: %w", path, err)
	}
	return f.Close()
}
