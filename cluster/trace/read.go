package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// record is one line of a sink: an event, or the closing summary.
type record struct {
	Event
	Summary *Summary `json:"trace_summary"`
}

// Read decodes a sink: its events in file order and its closing summary (nil
// when the tracer was not closed). A torn last line, left by a process killed
// mid-write, is skipped: it is not data. Any other undecodable line is an
// error naming its line number.
func Read(r io.Reader) ([]Event, *Summary, error) {
	var (
		events  []Event
		summary *Summary
		bad     error
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		if bad != nil { // the bad line was not the last one
			return nil, nil, bad
		}
		var rec record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			bad = fmt.Errorf("line %d: %w", line, err)
			continue
		}
		if rec.Summary != nil {
			summary = rec.Summary
			continue
		}
		events = append(events, rec.Event)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	return events, summary, nil
}

// ReadFile is Read of the file at path.
func ReadFile(path string) ([]Event, *Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	ev, s, err := Read(f)
	if err != nil {
		return nil, nil, fmt.Errorf("trace %s: %w", path, err)
	}
	return ev, s, nil
}
