package provider

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Least privilege: of the state directory's credentials, every actor of a
// secure cluster is given exactly the files its role needs (Component.Files,
// what its flags name: the process provider's argv, the docker provider's
// mounts), every one of them written at Up; the cluster CA's key and the
// etcd admin certificate go to no actor, another member's or actor's key
// and kubeconfig to none, etcd's certificates to the members and apiservers
// only.
func TestEachActorGetsOnlyItsOwnFiles(t *testing.T) {
	top := Topology{EtcdMembers: 3, APIServers: 2, ControllerManagers: 2, Schedulers: 1, RealNodes: 2, HollowNodes: 3, LinkProxies: true}
	top.Defaults()
	addr := fakeAddressing()
	addr.StateDir = t.TempDir()
	cs := Plan(top, addr)
	if err := WritePKI(addr.StateDir, cs, []string{"127.0.0.1"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := WriteKubeconfigs(addr.StateDir, cs, true, func(s string) string { return "https://" + s + ":6443" }); err != nil {
		t.Fatal(err)
	}
	rel := func(p string) string {
		r, err := filepath.Rel(addr.StateDir, p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// What each actor may read, relative to the state directory.
	ops := func(n string) []string {
		return []string{"pki/ops-" + n + ".crt", "pki/ops-" + n + ".key", "pki/ca.crt"}
	}
	kubelet := func(n string) []string {
		return []string{"pki/kubelet-" + n + ".crt", "pki/kubelet-" + n + ".key", "pki/ca.crt"}
	}
	kubeconfig := func(n string) []string { return []string{"kubeconfigs/" + n + ".kubeconfig"} }
	etcd := func(n string) []string {
		return []string{"pki/etcd/" + n + ".crt", "pki/etcd/" + n + ".key", "pki/etcd/ca.crt",
			"pki/etcd/" + n + "-peer.crt", "pki/etcd/" + n + "-peer.key", "pki/etcd/peer-ca.crt"}
	}
	apiserver := []string{"pki/apiserver.crt", "pki/apiserver.key", "pki/ca.crt", "pki/tokens.csv",
		"pki/apiserver-kubelet-client.crt", "pki/apiserver-kubelet-client.key",
		"pki/etcd/ca.crt", "pki/etcd/apiserver-etcd-client.crt", "pki/etcd/apiserver-etcd-client.key"}
	want := map[string][]string{
		"etcd-0": etcd("etcd-0"), "etcd-1": etcd("etcd-1"), "etcd-2": etcd("etcd-2"),
		"apiserver-0": apiserver, "apiserver-1": apiserver,
		"controller-manager-0": append(kubeconfig("controller-manager-0"), ops("controller-manager-0")...),
		"controller-manager-1": append(kubeconfig("controller-manager-1"), ops("controller-manager-1")...),
		"scheduler-0":          append(kubeconfig("scheduler-0"), ops("scheduler-0")...),
		"hollow-nodes":         slices.Concat(kubeconfig("hollow-nodes"), kubelet("hollow-nodes"), ops("hollow-nodes"), []string{"pki/hollow-nodes.tokens"}),
		"registry":             nil,
		"node-0":               slices.Concat(kubeconfig("node-0"), kubelet("node-0"), ops("node-0")),
		"node-1":               slices.Concat(kubeconfig("node-1"), kubelet("node-1"), ops("node-1")),
	}
	readers := map[string][]string{} // file -> actors given it
	for _, c := range cs {
		var got []string
		for _, f := range c.Files(addr.StateDir) {
			if _, err := os.Stat(f); err != nil {
				t.Errorf("%s is given %s, which Up did not write: %v", c.Name, f, err)
			}
			got = append(got, rel(f))
			readers[rel(f)] = append(readers[rel(f)], c.Name)
		}
		w, ok := want[c.Name]
		if !ok {
			t.Errorf("no expectation for %s", c.Name)
			continue
		}
		slices.Sort(got)
		w = slices.Sorted(slices.Values(slices.Compact(slices.Sorted(slices.Values(w)))))
		if !slices.Equal(got, w) {
			t.Errorf("%s is given\n  %q\nwant\n  %q", c.Name, got, w)
		}
	}
	// Every file Up wrote under pki/ and kubeconfigs/ whose contents are
	// a secret (a key, a token file, a kubeconfig) has at most one kind
	// of reader; the CA's key and the admin's certificate have none.
	err := filepath.WalkDir(addr.StateDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		r := rel(path)
		switch {
		case r == "pki/ca.key" || strings.HasPrefix(r, "pki/etcd/admin."):
			if len(readers[r]) > 0 {
				t.Errorf("%s is given to %v, want no actor", r, readers[r])
			}
		case strings.HasSuffix(r, ".key") || strings.HasSuffix(r, ".kubeconfig") || strings.HasSuffix(r, ".tokens") || strings.HasSuffix(r, ".csv"):
			roles := map[string]bool{}
			for _, a := range readers[r] {
				roles[strings.TrimRight(a, "0123456789")] = true
			}
			if len(roles) > 1 {
				t.Errorf("secret %s is given to %v: more than one kind of actor", r, readers[r])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// The values Files finds: anywhere after an "=", or a whole argument;
	// nothing outside pki/ and kubeconfigs/, however the path is spelt.
	c := Component{Name: "x", Args: []string{"x", "--kubelet-arg=--tls-cert-file=/s/pki/a.crt", "--ca", "/s/pki/b.crt",
		"--data-dir=/s/etcd/x", "--other=/s/pki/../kubeconfig", "--k=/s/kubeconfigs/x.kubeconfig", "--dup=/s/pki/a.crt", "--log=/s/logs/x.log"}}
	if got := strings.Join(c.Files("/s"), " "); got != "/s/pki/a.crt /s/pki/b.crt /s/kubeconfigs/x.kubeconfig" {
		t.Errorf("Files = %s", got)
	}
	// An insecure cluster's actors are given their kubeconfigs alone.
	top.Insecure = true
	for _, c := range Plan(top, addr) {
		if f := c.Files(addr.StateDir); len(f) > 1 || len(f) == 1 && f[0] != c.Kubeconfig {
			t.Errorf("insecure %s is given %q", c.Name, f)
		}
	}
}
