package bench

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// KubeEventsFile is the run directory's Kubernetes Events: every core/v1
// Event in the job's namespaces as listed at the end of the load, before
// the cluster goes (the kubelets' Pulling … Started, the scheduler's
// Scheduled), one JSON object a line, gzipped.
const KubeEventsFile = "kube-events.jsonl.gz"

// listKubeEvents lists the Events of the namespaces, a page at a time.
func listKubeEvents(ctx context.Context, cs kubernetes.Interface, namespaces []string) ([]corev1.Event, error) {
	var out []corev1.Event
	for _, ns := range namespaces {
		opts := metav1.ListOptions{Limit: 500}
		for {
			l, err := cs.CoreV1().Events(ns).List(ctx, opts)
			if err != nil {
				return out, fmt.Errorf("events in %s: %w", ns, err)
			}
			out = append(out, l.Items...)
			if l.Continue == "" {
				break
			}
			opts.Continue = l.Continue
		}
	}
	return out, nil
}

func writeKubeEvents(path string, events []corev1.Event) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(f)
	enc := json.NewEncoder(zw)
	for i := range events {
		if err := enc.Encode(&events[i]); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// ReadKubeEvents reads a run directory's KubeEventsFile.
func ReadKubeEvents(path string) ([]corev1.Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []corev1.Event
	dec := json.NewDecoder(zr)
	for dec.More() {
		var e corev1.Event
		if err := dec.Decode(&e); err != nil {
			return out, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, e)
	}
	return out, nil
}
