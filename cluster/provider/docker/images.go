package docker

import (
	"archive/tar"
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/moby/moby/client"
)

// In the images, every program lives in binDir; it is also the nodes' and
// the registry's --bin-dir.
const binDir = "/kstep/bin"

// imageSpec is one of kstep's images: programs from the host's bin
// directory, copied into binDir of an empty (FROM scratch) image.
type imageSpec struct {
	// repo is the image's name without a tag; the tag is the content hash.
	repo string
	// kind labels the image (dev.kstep.image), so old builds can be found.
	kind string
	// programs are file names in the host's bin directory.
	programs []string
}

var (
	// controlPlaneImage runs etcd, the apiservers, controller-managers,
	// schedulers, hollow nodes, and the registry (which builds its images
	// from kstep-pause and kstep-app).
	controlPlaneImage = imageSpec{repo: "kstep/control-plane", kind: "control-plane",
		programs: []string{"kstep", "kstep-pause", "kstep-app"}}
	// nodeImage runs `kstep node`: containerd, its shim, runc and the CNI
	// plugins beside kstep (for the kubelet).
	nodeImage = imageSpec{repo: "kstep/node", kind: "node",
		programs: []string{"kstep", "containerd", "containerd-shim-runc-v2", "runc", "bridge", "host-local", "portmap", "loopback"}}
)

// dockerfile is the image's recipe. WORKDIR creates the directories a
// scratch image lacks and the programs expect (/tmp, /run).
func (s imageSpec) dockerfile() string {
	var b strings.Builder
	b.WriteString("# kstep " + s.kind + " image: written by the docker provider, built locally.\nFROM scratch\n")
	for _, p := range s.programs {
		fmt.Fprintf(&b, "COPY %s %s/%s\n", p, binDir, p)
	}
	b.WriteString("WORKDIR /run\nWORKDIR /var/lib/kstep\nWORKDIR /tmp\n")
	fmt.Fprintf(&b, "ENV PATH=%s\nENTRYPOINT [\"%s/kstep\"]\n", binDir, binDir)
	return b.String()
}

// hostBin is where an image's programs come from on the host: the kstep
// binary the spec names (whatever its file is called: kstep bench --ab
// runs two builds side by side) and, beside it in dir, the others.
type hostBin struct {
	dir   string
	kstep string // "" is dir/kstep
}

// hostBinOf is the programs of the kstep binary ("" = the running one).
func hostBinOf(binary string) (hostBin, error) {
	if binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return hostBin{}, fmt.Errorf("find the kstep binary: %w", err)
		}
		binary = exe
	}
	abs, err := filepath.Abs(binary)
	if err != nil {
		return hostBin{}, err
	}
	return hostBin{dir: filepath.Dir(abs), kstep: abs}, nil
}

// path is the host's file of the program named p.
func (h hostBin) path(p string) string {
	if p == "kstep" && h.kstep != "" {
		return h.kstep
	}
	return filepath.Join(h.dir, p)
}

// contentTag hashes the Dockerfile and every program: the same inputs give
// the same tag, so an unchanged image is found instead of built.
func (s imageSpec) contentTag(host hostBin) (string, error) {
	h := sha256.New()
	io.WriteString(h, s.dockerfile())
	for _, p := range s.programs {
		f, err := os.Open(host.path(p))
		if err != nil {
			return "", fmt.Errorf("image %s: %w (run make build)", s.repo, err)
		}
		fmt.Fprintf(h, "\x00%s\x00", p)
		_, err = io.Copy(h, bufio.NewReaderSize(f, 1<<20))
		f.Close()
		if err != nil {
			return "", fmt.Errorf("image %s: hash %s: %w", s.repo, p, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// ensureImage returns the reference of s built from host's programs, building it
// through the Docker API only when no image has that content tag yet.
// Older builds of s that no container uses are removed after a build.
func ensureImage(ctx context.Context, cli client.APIClient, s imageSpec, host hostBin, logf func(string, ...any)) (string, error) {
	tag, err := s.contentTag(host)
	if err != nil {
		return "", err
	}
	ref := s.repo + ":" + tag
	if _, err := cli.ImageInspect(ctx, ref); err == nil {
		return ref, nil
	}
	logf("building image %s from %s", ref, host.path("kstep"))
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(s.writeContext(pw, host)) }()
	res, err := cli.ImageBuild(ctx, pr, client.ImageBuildOptions{
		Tags:        []string{ref},
		Remove:      true,
		ForceRemove: true,
		Labels:      map[string]string{labelManaged: "true", labelImage: s.kind},
	})
	if err != nil {
		pr.CloseWithError(err)
		return "", fmt.Errorf("build image %s: %w", ref, err)
	}
	defer res.Body.Close()
	if err := buildResult(res.Body); err != nil {
		return "", fmt.Errorf("build image %s: %w", ref, err)
	}
	removeOldImages(ctx, cli, s, ref)
	return ref, nil
}

// writeContext writes the build context: the Dockerfile and the programs.
func (s imageSpec) writeContext(w io.Writer, host hostBin) error {
	tw := tar.NewWriter(w)
	df := []byte(s.dockerfile())
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(df))}); err != nil {
		return err
	}
	if _, err := tw.Write(df); err != nil {
		return err
	}
	for _, p := range s.programs {
		if err := addFile(tw, host.path(p), p); err != nil {
			return err
		}
	}
	return tw.Close()
}

func addFile(tw *tar.Writer, path, name string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: st.Size()}); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}

// buildResult reads the daemon's build output (JSON messages) to the end
// and returns the error it reports, if any.
func buildResult(r io.Reader) error {
	dec := json.NewDecoder(r)
	var last string
	for {
		var m struct {
			Stream      string `json:"stream"`
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("read build output: %w", err)
		}
		if m.Error != "" {
			return fmt.Errorf("%s (after %q)", m.Error, strings.TrimSpace(last))
		}
		if m.Stream != "" {
			last = m.Stream
		}
	}
}

// removeOldImages removes earlier builds of s (other content tags). One a
// container still uses stays: the removal is not forced.
func removeOldImages(ctx context.Context, cli client.APIClient, s imageSpec, keep string) {
	l, err := cli.ImageList(ctx, client.ImageListOptions{Filters: make(client.Filters).Add("label", labelImage+"="+s.kind)})
	if err != nil {
		return
	}
	for _, img := range l.Items {
		for _, t := range img.RepoTags {
			if t != keep && strings.HasPrefix(t, s.repo+":") {
				_, _ = cli.ImageRemove(ctx, t, client.ImageRemoveOptions{PruneChildren: true})
			}
		}
	}
}
