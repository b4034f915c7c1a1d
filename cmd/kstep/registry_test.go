package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/images"
	"github.com/kstep-dev/kstep/internal/testenv"
)

func TestRegistryCommandServesUntilCancelled(t *testing.T) {
	bin := t.TempDir()
	for _, name := range []string{images.PauseBinary, images.AppBinary} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("stand-in for "+name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr testenv.SyncBuffer
	cmd := newRegistryCmd()
	cmd.SetArgs([]string{"--listen=127.0.0.1:0", "--bin-dir=" + bin, "--pad-mib=1"})
	cmd.SetErr(&stderr)
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()

	serving := regexp.MustCompile(`serving on (127\.0\.0\.1:\d+)`)
	var addr string
	for deadline := time.Now().Add(30 * time.Second); addr == "" && time.Now().Before(deadline); {
		if m := serving.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	if addr == "" {
		t.Fatalf("kstep registry never said where it serves: %q", stderr.String())
	}
	for _, path := range []string{"/healthz", "/v2/app/manifests/" + images.PadTag(1), "/v2/pause/manifests/v1"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %s", path, resp.Status)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("kstep registry after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("kstep registry did not stop")
	}
}
