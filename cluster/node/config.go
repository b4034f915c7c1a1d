package node

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"regexp"
)

// Config is one real node on this host.
type Config struct {
	// Name is the node's name: the kubelet registers it.
	Name string
	// Index tells this node apart from the host's other nodes, 0–255: it
	// picks the pod subnet 10.88.<Index>.0/24 and the bridge kstep<Index>.
	// Two nodes on one host must not share it.
	Index int
	// Dir holds everything the node writes: configuration, containerd's
	// root and state, its socket, logs (see Layout).
	Dir string
	// BinDir holds containerd, containerd-shim-runc-v2, runc and the CNI
	// plugins (make node-bins). Containerd runs the plugins from here.
	BinDir string
	// Registry is the host:port of kstep's registry (kstep registry), which
	// containerd reaches for registry.kstep.local.
	Registry string
	// Snapshotter is containerd's snapshotter: "overlayfs", "native", or
	// empty to use overlayfs where this host can mount overlays and native
	// where it cannot.
	Snapshotter string
	// LogLevel is containerd's log level; empty means "info".
	LogLevel string
}

// PodCIDR is the node's pod subnet: 10.88.<Index>.0/24.
func (c Config) PodCIDR() netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 88, byte(c.Index), 0}), 24)
}

// Bridge is the name of the node's pod bridge (and of its CNI network).
func (c Config) Bridge() string { return fmt.Sprintf("kstep%d", c.Index) }

// The CNI plugins the node's network uses, by binary name in BinDir.
// Containerd runs loopback itself for every pod (it is not in the conflist).
var cniPlugins = []string{"bridge", "host-local", "portmap", "loopback"}

// The programs Start runs, by binary name in BinDir.
const (
	containerdBinary = "containerd"
	shimBinary       = "containerd-shim-runc-v2"
	runcBinary       = "runc"
)

// maxSocketPath is the longest path a unix socket may have (sun_path is 108
// bytes with its terminating NUL).
const maxSocketPath = 107

var nodeName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)

// Validate reports what is wrong with c, if anything.
func (c Config) Validate() error {
	var errs []error
	if !nodeName.MatchString(c.Name) {
		errs = append(errs, fmt.Errorf("node name %q: want a DNS subdomain (lower case letters, digits, '-', '.')", c.Name))
	}
	if c.Index < 0 || c.Index > 255 {
		errs = append(errs, fmt.Errorf("node index %d: want 0–255 (it picks 10.88.<index>.0/24)", c.Index))
	}
	if c.Dir == "" || !filepath.IsAbs(c.Dir) {
		errs = append(errs, fmt.Errorf("node dir %q: want an absolute path", c.Dir))
	}
	if c.BinDir == "" || !filepath.IsAbs(c.BinDir) {
		errs = append(errs, fmt.Errorf("bin dir %q: want an absolute path", c.BinDir))
	}
	if _, _, err := net.SplitHostPort(c.Registry); err != nil {
		errs = append(errs, fmt.Errorf("registry %q: want host:port: %w", c.Registry, err))
	}
	switch c.Snapshotter {
	case "", "overlayfs", "native":
	default:
		errs = append(errs, fmt.Errorf("snapshotter %q: want overlayfs, native or empty", c.Snapshotter))
	}
	if c.Dir != "" {
		if s := Paths(c.Dir).Socket; len(s)+len(".ttrpc") > maxSocketPath {
			errs = append(errs, fmt.Errorf("node dir %q is too long: the socket path %s.ttrpc would exceed the %d bytes a unix socket allows", c.Dir, s, maxSocketPath))
		}
	}
	return errors.Join(errs...)
}

// Layout is where a node's files live, all under one directory.
type Layout struct {
	Dir              string
	ContainerdConfig string // containerd.toml
	Root             string // containerd's root: images, snapshots, metadata
	State            string // containerd's state: sockets of tasks, netns mounts
	Socket           string // containerd's gRPC socket (CRI); ttrpc is Socket+".ttrpc"
	CNIConfDir       string // the conflist
	CNIDataDir       string // host-local's IP allocations
	CertsDir         string // registry hosts (containerd's config_path)
	ContainerdLog    string // containerd's stdout and stderr, unless redirected
	KubeletDir       string // the kubelet's --root-dir
	PodLogsDir       string // the kubelet's --pod-logs-dir: containers' logs
}

// Paths is the Layout of a node directory.
func Paths(dir string) Layout {
	return Layout{
		Dir:              dir,
		ContainerdConfig: filepath.Join(dir, "containerd.toml"),
		Root:             filepath.Join(dir, "root"),
		State:            filepath.Join(dir, "state"),
		Socket:           filepath.Join(dir, "containerd.sock"),
		CNIConfDir:       filepath.Join(dir, "cni", "net.d"),
		CNIDataDir:       filepath.Join(dir, "cni", "networks"),
		CertsDir:         filepath.Join(dir, "certs.d"),
		ContainerdLog:    filepath.Join(dir, "containerd.log"),
		KubeletDir:       filepath.Join(dir, "kubelet"),
		PodLogsDir:       filepath.Join(dir, "pods"),
	}
}

// Endpoint is the CRI endpoint of the node's containerd, as a kubelet's
// --container-runtime-endpoint takes it.
func (l Layout) Endpoint() string { return "unix://" + l.Socket }
