package images

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Host is the registry host in every image name users see. Nodes map it to
// the Registry's real address; it never resolves in DNS.
const Host = "registry.kstep.local"

// The images every registry serves, as users name them.
const (
	Pause = Host + "/pause:v1" // the sandbox image of every pod
	AppV1 = Host + "/app:v1"   // the workload: kstep-app, version v1
	AppV2 = Host + "/app:v2"   // the same program, another digest (rolling updates)
)

// The programs Build wraps, by file name in the bin directory.
const (
	PauseBinary = "kstep-pause"
	AppBinary   = "kstep-app"
)

// AppPort is the port kstep-app listens on in its image.
const AppPort = 8080

// Image is one image of the set, by the repository and tag it is served
// under.
type Image struct {
	Repo string // "pause", "app"
	Tag  string // "v1", "v2", "v1-pad64"
	v1.Image
}

// Ref is the name users give the image: registry.kstep.local/<repo>:<tag>.
func (i Image) Ref() string { return Ref(i.Repo, i.Tag) }

// Ref names an image of kstep's registry: registry.kstep.local/<repo>:<tag>.
func Ref(repo, tag string) string { return Host + "/" + repo + ":" + tag }

// PadTag is the tag of app:v1 with a padding layer of mib MiB.
func PadTag(mib int) string { return "v1-pad" + strconv.Itoa(mib) }

// Option changes what Build builds or how a Registry serves.
type Option func(*options)

type options struct {
	padMiB     int
	requestLog *log.Logger
}

// WithPadding adds app:v1-pad<mib>: app:v1 plus a layer of mib MiB of
// incompressible bytes (a fixed seed, so the digest is stable). Zero or less
// adds nothing.
func WithPadding(mib int) Option {
	return func(o *options) { o.padMiB = mib }
}

// Build assembles the image set from the programs in binDir (kstep-pause,
// kstep-app): pause:v1, app:v1, app:v2 and, WithPadding, app:v1-pad<N>.
func Build(binDir string, opts ...Option) ([]Image, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	pause, err := programLayer(binDir, PauseBinary, "/pause")
	if err != nil {
		return nil, err
	}
	app, err := programLayer(binDir, AppBinary, "/app")
	if err != nil {
		return nil, err
	}

	pauseImg, err := assemble(v1.Config{
		Entrypoint: []string{"/pause"},
		Env:        []string{"PATH=/"},
		Labels:     map[string]string{"dev.kstep.image": "pause", "dev.kstep.version": "v1"},
	}, pause)
	if err != nil {
		return nil, fmt.Errorf("image pause:v1: %w", err)
	}
	set := []Image{{Repo: "pause", Tag: "v1", Image: pauseImg}}
	for _, version := range []string{"v1", "v2"} {
		img, err := assemble(appConfig(version), app)
		if err != nil {
			return nil, fmt.Errorf("image app:%s: %w", version, err)
		}
		set = append(set, Image{Repo: "app", Tag: version, Image: img})
	}
	if o.padMiB > 0 {
		pad, err := paddingLayer(o.padMiB)
		if err != nil {
			return nil, err
		}
		img, err := assemble(appConfig("v1"), app, pad)
		if err != nil {
			return nil, fmt.Errorf("image app:%s: %w", PadTag(o.padMiB), err)
		}
		set = append(set, Image{Repo: "app", Tag: PadTag(o.padMiB), Image: img})
	}
	return set, nil
}

// appConfig is kstep-app's image configuration at a version. The version is
// in the environment and a label, which is what makes v1 and v2 distinct
// images over one shared layer.
func appConfig(version string) v1.Config {
	port := strconv.Itoa(AppPort)
	return v1.Config{
		Entrypoint:   []string{"/app"},
		Env:          []string{"PATH=/", "PORT=" + port, "KSTEP_APP_VERSION=" + version},
		ExposedPorts: map[string]struct{}{port + "/tcp": {}},
		Labels:       map[string]string{"dev.kstep.image": "app", "dev.kstep.version": version},
	}
}

// assemble stacks layers on an empty OCI image with cfg as its runtime
// configuration, for linux on this machine's architecture (the programs are
// built for it).
func assemble(cfg v1.Config, layers ...v1.Layer) (v1.Image, error) {
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err := mutate.AppendLayers(img, layers...)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS = "linux"
	cf.Architecture = runtime.GOARCH
	cf.Config = cfg
	return mutate.ConfigFile(img, cf)
}

// programLayer is a gzipped layer holding one executable, binDir/name, at
// path. Headers carry no time or owner, so the same binary always gives the
// same digest.
func programLayer(binDir, name, path string) (v1.Layer, error) {
	bin, err := os.ReadFile(filepath.Join(binDir, name))
	if err != nil {
		return nil, fmt.Errorf("program of the %s image (make build puts it in bin/): %w", name, err)
	}
	tb, err := tarOf(path, bin, 0o755)
	if err != nil {
		return nil, err
	}
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(tb)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
}

// paddingSeed fixes the padding bytes, and so the padded image's digest.
var paddingSeed = [32]byte{'k', 's', 't', 'e', 'p', '-', 'p', 'a', 'd'}

// paddingLayer is an uncompressed layer with one file of mib MiB of
// pseudo-random bytes. Random bytes do not compress, so the layer is stored
// as a plain tar: a pull moves exactly what a compressed layer of that size
// would, and building it costs no compression.
func paddingLayer(mib int) (v1.Layer, error) {
	data := make([]byte, mib<<20)
	rng := rand.NewChaCha8(paddingSeed)
	if _, err := rng.Read(data); err != nil {
		return nil, err
	}
	tb, err := tarOf("/pad/"+strconv.Itoa(mib)+"MiB", data, 0o644)
	if err != nil {
		return nil, err
	}
	return static.NewLayer(tb, types.OCIUncompressedLayer), nil
}

// epoch is every file's modification time: fixed, for reproducible digests.
var epoch = time.Unix(0, 0)

// tarOf is a tar archive with one regular file (and its directory). Every
// header is the same for the same input (fixed time, no owner).
func tarOf(path string, data []byte, mode int64) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	name := path[1:] // layer paths are relative to the root
	if dir := filepath.Dir(name); dir != "." {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, ModTime: epoch, Format: tar.FormatUSTAR}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: epoch, Format: tar.FormatUSTAR}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
