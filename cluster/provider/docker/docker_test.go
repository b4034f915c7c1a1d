package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// dockerClient connects to the Docker daemon or skips: CI has one.
func dockerClient(t *testing.T) *testcontainers.DockerClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := Available(ctx); err != nil {
		t.Skipf("no Docker daemon answers: %v", err)
	}
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// fakeBin writes small stand-ins for an image's programs: the image is
// built, never run.
func fakeBin(t *testing.T, s imageSpec) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range s.programs {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("#!"+p+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestContentTag(t *testing.T) {
	dir := fakeBin(t, controlPlaneImage)
	a, err := controlPlaneImage.contentTag(hostBin{dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := controlPlaneImage.contentTag(hostBin{dir: dir}); b != a {
		t.Fatalf("same inputs, tags %s and %s", a, b)
	}
	if err := os.WriteFile(filepath.Join(dir, "kstep-app"), []byte("changed"), 0o755); err != nil {
		t.Fatal(err)
	}
	if b, _ := controlPlaneImage.contentTag(hostBin{dir: dir}); b == a {
		t.Fatalf("a changed program kept tag %s", a)
	}
	// A kstep binary of another name (kstep bench --ab's OLD beside NEW)
	// is the image's kstep, the other programs still from its directory.
	other := filepath.Join(dir, "kstep-old")
	if err := os.WriteFile(other, []byte("another build"), 0o755); err != nil {
		t.Fatal(err)
	}
	host, err := hostBinOf(other)
	if err != nil {
		t.Fatal(err)
	}
	if host.path("kstep") != other || host.path("kstep-app") != filepath.Join(dir, "kstep-app") {
		t.Errorf("programs of %s: kstep %s, kstep-app %s", other, host.path("kstep"), host.path("kstep-app"))
	}
	same, _ := controlPlaneImage.contentTag(hostBin{dir: dir})
	if b, err := controlPlaneImage.contentTag(host); err != nil || b == same {
		t.Fatalf("kstep from %s: tag %s (%v), the same as dir/kstep's %s", other, b, err, same)
	}
	var ctx bytes.Buffer
	if err := controlPlaneImage.writeContext(&ctx, host); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(&ctx)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("the build context has no kstep: %v", err)
		}
		if h.Name == "kstep" {
			if b, _ := io.ReadAll(tr); string(b) != "another build" {
				t.Errorf("the image's kstep is %q, want %s's", b, other)
			}
			break
		}
	}
	os.Remove(filepath.Join(dir, "kstep"))
	if _, err := controlPlaneImage.contentTag(hostBin{dir: dir}); err == nil || !strings.Contains(err.Error(), "make build") {
		t.Fatalf("missing program: %v", err)
	}
	df := nodeImage.dockerfile()
	for _, want := range []string{"FROM scratch\n", "COPY runc /kstep/bin/runc\n", `ENTRYPOINT ["/kstep/bin/kstep"]`} {
		if !strings.Contains(df, want) {
			t.Errorf("node Dockerfile lacks %q:\n%s", want, df)
		}
	}
}

// An image is built once per content: the second ensureImage is a lookup.
func TestEnsureImageBuildsOnce(t *testing.T) {
	cli := dockerClient(t)
	spec := imageSpec{repo: "kstep/test-image", kind: "test", programs: []string{"kstep"}}
	dir := fakeBin(t, spec)
	if err := os.WriteFile(filepath.Join(dir, "kstep"), []byte(t.Name()+strconv.Itoa(os.Getpid())), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var builds int
	logf := func(string, ...any) { builds++ }
	ref, err := ensureImage(ctx, cli, spec, hostBin{dir: dir}, logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = cli.ImageRemove(context.Background(), ref, client.ImageRemoveOptions{Force: true, PruneChildren: true})
	})
	again, err := ensureImage(ctx, cli, spec, hostBin{dir: dir}, logf)
	if err != nil {
		t.Fatal(err)
	}
	if again != ref || builds != 1 {
		t.Fatalf("second ensureImage: %s (first %s), %d builds; want the same image, 1 build", again, ref, builds)
	}
	img, err := cli.ImageInspect(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if img.Config == nil || img.Config.Labels[labelImage] != "test" || img.Config.Labels[labelManaged] != "true" {
		t.Fatalf("image labels: %+v", img.Config)
	}
}

// The sweep removes what dead owners left and spares live and detached
// clusters.
func TestSweep(t *testing.T) {
	cli := dockerClient(t)
	ctx := context.Background()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	existing := t.TempDir()
	cases := map[string]struct {
		labels map[string]string
		swept  bool
	}{
		"dead-owner":        {map[string]string{labelOwner: strconv.Itoa(dead.Process.Pid), labelStateDir: existing, labelDetached: "false"}, true},
		"live-owner":        {map[string]string{labelOwner: strconv.Itoa(os.Getpid()), labelStateDir: existing, labelDetached: "false"}, false},
		"detached":          {map[string]string{labelOwner: strconv.Itoa(dead.Process.Pid), labelStateDir: existing, labelDetached: "true"}, false},
		"detached-dir-gone": {map[string]string{labelOwner: strconv.Itoa(dead.Process.Pid), labelStateDir: filepath.Join(existing, "gone"), labelDetached: "true"}, true},
		"replaced":          {map[string]string{labelOwner: strconv.Itoa(os.Getpid()), labelStateDir: existing, labelDetached: "true"}, true},
	}
	prefix := "sweeptest" + strconv.Itoa(os.Getpid()) + "-"
	for name, c := range cases {
		c.labels[labelManaged] = "true"
		c.labels[labelCluster] = prefix + name
		if _, err := cli.VolumeCreate(ctx, client.VolumeCreateOptions{Name: prefix + name, Labels: c.labels}); err != nil {
			t.Fatal(err)
		}
		if _, err := cli.NetworkCreate(ctx, prefix+name, client.NetworkCreateOptions{Driver: "bridge", Labels: c.labels}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for name := range cases {
			_ = removeCluster(context.Background(), cli, prefix+name)
		}
	})
	// Other stale clusters on this daemon, if any, are swept too.
	if err := sweep(ctx, cli, prefix+"replaced", func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	for name, c := range cases {
		found, err := resources(ctx, cli, make(client.Filters).Add("label", labelCluster+"="+prefix+name))
		if err != nil {
			t.Fatal(err)
		}
		if gone := len(found) == 0; gone != c.swept {
			t.Errorf("%s: swept=%v, want %v (left %v)", name, gone, c.swept, found)
		} else if !gone && len(found) != 2 {
			t.Errorf("%s: want its volume and network, found %v", name, found)
		}
	}
}
