package node

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func testConfig(dir string, index int) Config {
	return Config{Name: "node-a", Index: index, Dir: dir, BinDir: "/opt/kstep/bin", Registry: "127.0.0.1:5000", Snapshotter: "overlayfs"}
}

func TestValidate(t *testing.T) {
	ok := testConfig("/var/lib/kstep/node-a", 3)
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string // substring of the error; empty: valid
	}{
		{"valid", func(*Config) {}, ""},
		{"bad name", func(c *Config) { c.Name = "Node_A" }, "node name"},
		{"index too big", func(c *Config) { c.Index = 256 }, "node index 256"},
		{"negative index", func(c *Config) { c.Index = -1 }, "node index -1"},
		{"relative dir", func(c *Config) { c.Dir = "node" }, "absolute"},
		{"relative bin dir", func(c *Config) { c.BinDir = "bin" }, "bin dir"},
		{"registry without port", func(c *Config) { c.Registry = "127.0.0.1" }, "registry"},
		{"unknown snapshotter", func(c *Config) { c.Snapshotter = "zfs" }, "snapshotter"},
		{"socket path too long", func(c *Config) { c.Dir = "/" + strings.Repeat("d", 100) }, "too long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.change(&c)
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Validate: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestWriteConfig compares the written files, with the node directory
// replaced by <dir>, to testdata/*.golden (go test -update rewrites them).
func TestWriteConfig(t *testing.T) {
	dir := t.TempDir()
	c, l, err := WriteConfig(testConfig(dir, 3))
	if err != nil {
		t.Fatal(err)
	}
	if c.LogLevel != "info" || c.Snapshotter != "overlayfs" {
		t.Errorf("resolved config: log level %q snapshotter %q", c.LogLevel, c.Snapshotter)
	}
	for file, golden := range map[string]string{
		l.ContainerdConfig: "containerd.toml.golden",
		filepath.Join(l.CNIConfDir, "10-kstep.conflist"):                "", // content: TestConflistPerNode
		filepath.Join(l.CertsDir, "registry.kstep.local", "hosts.toml"): "hosts.toml.golden",
	} {
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if golden == "" {
			continue
		}
		got = bytes.ReplaceAll(got, []byte(dir), []byte("<dir>"))
		got = bytes.ReplaceAll(got, []byte(`"`+runtime.GOOS+"/"+runtime.GOARCH+`"`), []byte(`"<platform>"`))
		path := filepath.Join("testdata", golden)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s (go test -update rewrites it):\n%s", file, path, got)
		}
	}
	conf, err := os.ReadFile(l.ContainerdConfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"restrict_oom_score_adj = true", `sandbox = "registry.kstep.local/pause:v1"`, "version = 3"} {
		if !bytes.Contains(conf, []byte(must)) {
			t.Errorf("containerd.toml lacks %q", must)
		}
	}
}

func TestConflistPerNode(t *testing.T) {
	seen := map[string]bool{}
	for _, index := range []int{0, 1, 7, 255} {
		for _, iptables := range []bool{true, false} {
			c := testConfig("/n", index)
			var got struct {
				Name    string
				Plugins []struct {
					Type   string
					Bridge string
					IPMasq bool
					IPAM   struct {
						Type    string
						DataDir string
						Ranges  [][]struct{ Subnet string }
					}
				}
			}
			if err := json.Unmarshal(cniConflist(c, Paths("/n"), iptables), &got); err != nil {
				t.Fatal(err)
			}
			br := got.Plugins[0]
			wantSubnet := c.PodCIDR().String()
			if br.Type != "bridge" || br.Bridge != c.Bridge() || br.IPAM.Type != "host-local" ||
				br.IPAM.Ranges[0][0].Subnet != wantSubnet || br.IPAM.DataDir != "/n/cni/networks" || br.IPMasq != iptables {
				t.Errorf("index %d iptables %v: bridge plugin %+v", index, iptables, br)
			}
			if wantPlugins := map[bool]int{true: 2, false: 1}[iptables]; len(got.Plugins) != wantPlugins {
				t.Errorf("index %d iptables %v: %d plugins, want %d", index, iptables, len(got.Plugins), wantPlugins)
			}
			if iptables {
				if seen[wantSubnet] || seen[br.Bridge] {
					t.Errorf("index %d reuses subnet %s or bridge %s", index, wantSubnet, br.Bridge)
				}
				seen[wantSubnet], seen[br.Bridge] = true, true
			}
		}
	}
	if got := testConfig("/n", 7).PodCIDR().String(); got != "10.88.7.0/24" {
		t.Errorf("PodCIDR of index 7: %s", got)
	}
}

func TestRestartDelay(t *testing.T) {
	for crashes, want := range []time.Duration{
		100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond,
		1600 * time.Millisecond, 3200 * time.Millisecond, 6400 * time.Millisecond, 10 * time.Second, 10 * time.Second,
	} {
		if got := restartDelay(crashes); got != want {
			t.Errorf("restartDelay(%d) = %v, want %v", crashes, got, want)
		}
	}
	if got := restartDelay(1000); got != restartMax {
		t.Errorf("restartDelay(1000) = %v", got)
	}
}

func TestChildEnv(t *testing.T) {
	t.Setenv("PATH", "/usr/bin:/bin")
	var path string
	for _, kv := range childEnv("/opt/kstep/bin") {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			if path != "" {
				t.Fatal("PATH twice")
			}
			path = p
		}
	}
	parts := strings.Split(path, ":")
	if parts[0] != "/opt/kstep/bin" || !strings.Contains(path, "/usr/sbin") || strings.Count(path, "/usr/bin:") != 1 {
		t.Errorf("PATH=%s", path)
	}
}

func TestKubeletArgv(t *testing.T) {
	for _, tc := range []struct {
		k    Kubelet
		want string
	}{
		{Kubelet{Binary: "/bin/kstep"},
			"/bin/kstep kubelet --container-runtime-endpoint unix:///n/containerd.sock --node-name n0 --pod-cidr 10.88.4.0/24 --root-dir /n/kubelet --pod-logs-dir /n/pods"},
		{Kubelet{Binary: "/bin/kstep", Kubeconfig: "/k", Args: []string{"--v=2", "--pod-cidr=10.0.0.0/24"}},
			"/bin/kstep kubelet --container-runtime-endpoint unix:///n/containerd.sock --node-name n0 --pod-cidr 10.88.4.0/24 --root-dir /n/kubelet --pod-logs-dir /n/pods --kubeconfig /k --v=2 --pod-cidr=10.0.0.0/24"},
	} {
		c := Config{Name: "n0", Index: 4, Dir: "/n"}
		if got := strings.Join(tc.k.argv(c, Paths(c.Dir)), " "); got != tc.want {
			t.Errorf("argv:\n got %s\nwant %s", got, tc.want)
		}
	}
}
