package main

import (
	"context"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/apiserver"
)

// The admission, audit, overload and slow-client flags reach Options.
func TestAPIServerAdmissionFlags(t *testing.T) {
	var got apiserver.Options
	cmd := apiserverCmd(func(_ context.Context, o apiserver.Options) error {
		got = o
		return nil
	})
	cmd.SetArgs([]string{
		"--default-not-ready-toleration-seconds=300",
		"--default-unreachable-toleration-seconds=-1",
		"--max-requests-inflight=7",
		"--max-mutating-requests-inflight=3",
		"--audit-log-path=/tmp/audit.log",
		"--audit-policy-level=Request",
		"--read-header-timeout=2s",
		"--body-read-timeout=5s",
	})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.DefaultNotReadyTolerationSeconds != 300 || got.DefaultUnreachableTolerationSeconds != -1 ||
		got.MaxRequestsInflight != 7 || got.MaxMutatingRequestsInflight != 3 ||
		got.AuditLogPath != "/tmp/audit.log" || got.AuditLevel != apiserver.AuditRequest ||
		got.ReadHeaderTimeout != 2*time.Second || got.BodyReadTimeout != 5*time.Second {
		t.Fatalf("options %+v", got)
	}
	d := apiserver.DefaultOptions()
	if d.DefaultNotReadyTolerationSeconds != 10 || d.MaxRequestsInflight != 400 || d.MaxMutatingRequestsInflight != 200 || d.AuditLevel != apiserver.AuditMetadata {
		t.Fatalf("defaults %+v", d)
	}
}
