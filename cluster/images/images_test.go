package images

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// fakeBins writes stand-ins for the two programs: Build wraps bytes, it
// never runs them.
func fakeBins(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{PauseBinary: "pause program", AppBinary: "app program"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func digests(t *testing.T, set []Image) map[string]v1.Hash {
	t.Helper()
	m := map[string]v1.Hash{}
	for _, img := range set {
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		m[img.Repo+":"+img.Tag] = d
	}
	return m
}

func TestBuild(t *testing.T) {
	bin := fakeBins(t)
	set, err := Build(bin, WithPadding(2))
	if err != nil {
		t.Fatal(err)
	}
	got := digests(t, set)
	for _, want := range []string{"pause:v1", "app:v1", "app:v2", "app:" + PadTag(2)} {
		if _, ok := got[want]; !ok {
			t.Errorf("image %s missing; have %v", want, got)
		}
	}
	if got["app:v1"] == got["app:v2"] {
		t.Errorf("app:v1 and app:v2 share digest %s", got["app:v1"])
	}

	again, err := Build(bin, WithPadding(2))
	if err != nil {
		t.Fatal(err)
	}
	for ref, d := range digests(t, again) {
		if got[ref] != d {
			t.Errorf("%s: digest %s, then %s: building is not reproducible", ref, got[ref], d)
		}
	}

	for _, img := range set {
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.OS != "linux" || len(cf.Config.Entrypoint) != 1 {
			t.Errorf("%s: os %q entrypoint %q", img.Ref(), cf.OS, cf.Config.Entrypoint)
		}
		layers, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		wantLayers := 1
		if img.Tag == PadTag(2) {
			wantLayers = 2
			size, err := layers[1].Size()
			if err != nil {
				t.Fatal(err)
			}
			if size < 2<<20 || size > 2<<20+4096 {
				t.Errorf("padding layer is %d bytes, want 2 MiB plus a tar header", size)
			}
		}
		if len(layers) != wantLayers {
			t.Errorf("%s: %d layers, want %d", img.Ref(), len(layers), wantLayers)
		}
	}
	if ref := set[0].Ref(); ref != Pause {
		t.Errorf("first image %s, want %s", ref, Pause)
	}
}

func TestBuildMissingProgram(t *testing.T) {
	_, err := Build(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "make build") {
		t.Fatalf("Build without programs: %v, want an error that says to run make build", err)
	}
}

func TestRegistryServesPushedImages(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	set, err := Build(fakeBins(t))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := Serve(ln)
	defer r.Close()

	health := func() int {
		resp, err := http.Get("http://" + r.Addr() + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := health(); code != http.StatusServiceUnavailable {
		t.Errorf("/healthz before Push: %d, want 503", code)
	}
	if err := r.Push(ctx, set); err != nil {
		t.Fatal(err)
	}
	if code := health(); code != http.StatusOK {
		t.Errorf("/healthz after Push: %d, want 200", code)
	}

	want := digests(t, set)
	for _, img := range set {
		ref, err := name.ParseReference(r.Addr()+"/"+img.Repo+":"+img.Tag, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		pulled, err := remote.Image(ref, remote.WithContext(ctx))
		if err != nil {
			t.Fatalf("pull %s: %v", ref, err)
		}
		d, err := pulled.Digest()
		if err != nil {
			t.Fatal(err)
		}
		if d != want[img.Repo+":"+img.Tag] {
			t.Errorf("pulled %s: digest %s, pushed %s", ref, d, want[img.Repo+":"+img.Tag])
		}
	}
}
