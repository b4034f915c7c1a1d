package node

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"text/template"
)

// SandboxImage is the pause image every pod sandbox of a node runs.
const SandboxImage = "registry.kstep.local/pause:v1"

// registryHost is the host in image names that the node maps to kstep's
// registry (cluster/images.Host; not imported: the node knows only names).
const registryHost = "registry.kstep.local"

// WriteConfig writes the node's files under c.Dir: containerd's
// configuration, the CNI network, and the registry mapping. It returns c
// with the snapshotter chosen (when c left it empty) and the Layout.
// Existing files are overwritten; containerd's root and state are kept.
func WriteConfig(c Config) (Config, Layout, error) {
	if err := c.Validate(); err != nil {
		return c, Layout{}, err
	}
	l := Paths(c.Dir)
	for _, d := range []string{l.Dir, l.Root, l.State, l.CNIConfDir, l.CNIDataDir, filepath.Join(l.CertsDir, registryHost)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return c, l, err
		}
	}
	if c.Snapshotter == "" {
		c.Snapshotter = "native"
		if err := overlaySupported(l.Root); err == nil {
			c.Snapshotter = "overlayfs"
		}
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	_, err := exec.LookPath("iptables")
	files := []struct {
		path string
		data []byte
	}{
		{l.ContainerdConfig, containerdConfig(c, l)},
		{filepath.Join(l.CNIConfDir, "10-kstep.conflist"), cniConflist(c, l, err == nil)},
		{filepath.Join(l.CertsDir, registryHost, "hosts.toml"), registryHosts(c.Registry)},
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, f.data, 0o600); err != nil {
			return c, l, fmt.Errorf("node %s: %w", c.Name, err)
		}
	}
	return c, l, nil
}

// containerdTemplate is containerd's configuration, version 3: containerd
// 2.x reads it (2.4 migrates it to its version 4 on load). Only what
// differs from containerd's defaults, or must differ between the host's
// nodes, is here.
var containerdTemplate = template.Must(template.New("containerd.toml").Funcs(template.FuncMap{"q": quote}).Parse(
	`# containerd of kstep node {{.Name}}: written by kstep node at every start.
version = 3
root = {{q .Root}}
state = {{q .State}}
# Nothing from /etc/containerd: this file is the whole configuration.
imports = []

[grpc]
  address = {{q .Socket}}

[ttrpc]
  address = {{q .TTRPC}}

[debug]
  level = {{q .LogLevel}}

[plugins]
  # NRI's socket is host-wide; the host's nodes would share it.
  [plugins.'io.containerd.nri.v1.nri']
    disable = true

  [plugins.'io.containerd.cri.v1.images']
    snapshotter = {{q .Snapshotter}}

    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = {{q .SandboxImage}}

    # {{.RegistryHost}} -> kstep's registry (certs.d/{{.RegistryHost}}/hosts.toml).
    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = {{q .CertsDir}}

  [plugins.'io.containerd.cri.v1.runtime']
    # CAP_SYS_RESOURCE is missing even for root on kstep's machines; without
    # this every RunPodSandbox fails with "failed to update
    # /proc/self/oom_score_adj: Permission denied".
    restrict_oom_score_adj = true
    # Pod network namespaces under this node's state, not /var/run/netns.
    netns_mounts_under_state_dir = true

    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = "runc"

      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        runtime_path = {{q .Shim}}

        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = {{q .Runc}}
          SystemdCgroup = false

    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = [{{q .BinDir}}]
      conf_dir = {{q .CNIConfDir}}
      max_conf_num = 1

  [plugins.'io.containerd.grpc.v1.cri']
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"

  # Pulls go through the transfer service: same registry hosts, and it
  # unpacks into the same snapshotter as the CRI plugin.
  [plugins.'io.containerd.transfer.v1.local']
    config_path = {{q .CertsDir}}

    [[plugins.'io.containerd.transfer.v1.local'.unpack_config]]
      platform = {{q .Platform}}
      snapshotter = {{q .Snapshotter}}
`))

func containerdConfig(c Config, l Layout) []byte {
	var b bytes.Buffer
	err := containerdTemplate.Execute(&b, map[string]any{
		"Name":         c.Name,
		"Root":         l.Root,
		"State":        l.State,
		"Socket":       l.Socket,
		"TTRPC":        l.Socket + ".ttrpc",
		"LogLevel":     c.LogLevel,
		"Snapshotter":  c.Snapshotter,
		"SandboxImage": SandboxImage,
		"RegistryHost": registryHost,
		"CertsDir":     l.CertsDir,
		"Shim":         filepath.Join(c.BinDir, shimBinary),
		"Runc":         filepath.Join(c.BinDir, runcBinary),
		"BinDir":       c.BinDir,
		"CNIConfDir":   l.CNIConfDir,
		"Platform":     runtime.GOOS + "/" + runtime.GOARCH,
	})
	if err != nil {
		panic(err) // the template and its data are fixed here
	}
	return b.Bytes()
}

// quote is a TOML basic string: JSON's escapes are TOML's.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// cniConflist is the node's pod network: a bridge with host-local IPAM on
// the node's /24 (the bridge is the pods' gateway, traffic leaving the node
// is masqueraded) and portmap for hostPort. Masquerading and portmap need
// iptables; without it pods still get addresses, reachable from the host.
func cniConflist(c Config, l Layout, iptables bool) []byte {
	type obj = map[string]any
	bridge := obj{
		"type":        "bridge",
		"bridge":      c.Bridge(),
		"isGateway":   true,
		"ipMasq":      iptables,
		"hairpinMode": true,
		"ipam": obj{
			"type":    "host-local",
			"ranges":  [][]obj{{{"subnet": c.PodCIDR().String()}}},
			"routes":  []obj{{"dst": "0.0.0.0/0"}},
			"dataDir": l.CNIDataDir,
		},
	}
	plugins := []obj{bridge}
	if iptables {
		plugins = append(plugins, obj{"type": "portmap", "capabilities": obj{"portMappings": true}})
	}
	b, err := json.MarshalIndent(obj{
		"cniVersion": "1.0.0",
		"name":       c.Bridge(),
		"plugins":    plugins,
	}, "", "  ")
	if err != nil {
		panic(err) // maps of strings, bools and slices
	}
	return append(b, '\n')
}

// registryHosts maps registry.kstep.local to kstep's registry at addr, over
// plain HTTP (containerd's hosts.toml, under config_path).
func registryHosts(addr string) []byte {
	url := quote("http://" + addr)
	return fmt.Appendf(nil, `# %s is kstep's registry (kstep registry), plain HTTP.
server = %s

[host.%s]
  capabilities = ["pull", "resolve"]
  skip_verify = true
`, registryHost, url, url)
}
