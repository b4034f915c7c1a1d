package loadgen

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Write is one write the apiserver acknowledged.
type Write struct {
	Op              string    `json:"op"` // create, scale, delete
	Kind            string    `json:"kind"`
	Namespace       string    `json:"namespace"`
	Name            string    `json:"name"`
	UID             types.UID `json:"uid"`
	ResourceVersion string    `json:"resourceVersion"`
	SentNS          int64     `json:"sent_ns"`
	AckNS           int64     `json:"ack_ns"`
}

// WriteLog collects acknowledged writes. Safe for concurrent use.
type WriteLog struct {
	mu     sync.Mutex
	writes []Write
}

func (l *WriteLog) add(w Write) {
	l.mu.Lock()
	l.writes = append(l.writes, w)
	l.mu.Unlock()
}

// WriteLogOf is a log holding writes (a Result's), to write to a file.
func WriteLogOf(writes []Write) *WriteLog { return &WriteLog{writes: append([]Write(nil), writes...)} }

// Writes returns the log sorted by ack time.
func (l *WriteLog) Writes() []Write {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]Write(nil), l.writes...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].AckNS < out[j].AckNS })
	return out
}

// WriteFile writes the log as JSON lines.
func (l *WriteLog) WriteFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write log: %w", err)
	}
	enc := json.NewEncoder(f)
	for _, w := range l.Writes() {
		if err := enc.Encode(w); err != nil {
			f.Close()
			return fmt.Errorf("write log %s: %w", path, err)
		}
	}
	return f.Close()
}

// PodOwner ties a pod the job's watch saw to the ReplicaSet that owns it.
type PodOwner struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid"`
	RSUID     types.UID `json:"rs_uid"`
	RSName    string    `json:"rs_name"`
	Node      string    `json:"node,omitempty"`
}
