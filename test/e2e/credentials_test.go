package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/cluster/provider/docker"
)

// checkContainerCredentials reads, from inside each container of the
// docker cluster in stateDir (docker cp: the images are FROM scratch, with
// no shell), what its filesystem holds of the state directory's pki/ and
// kubeconfigs/, and holds it to least privilege (#57): exactly the files
// its own flags name (docker.json's argv), so no apiserver sees an etcd
// member's key or the etcd admin's certificate, no actor the CA's key,
// another actor's key or kubeconfig.
func checkContainerCredentials(ctx context.Context, t *testing.T, stateDir string) {
	t.Helper()
	rel := func(f string) string { r, _ := filepath.Rel(stateDir, f); return r }
	actors := dockerActors(t, stateDir)
	if len(actors) == 0 {
		t.Fatalf("%s lists no actors", docker.StateFile)
	}
	for _, a := range actors {
		var seen []string
		for _, dir := range []string{"pki", "kubeconfigs"} {
			seen = append(seen, containerFiles(ctx, t, a.Container, filepath.Join(stateDir, dir))...)
		}
		slices.Sort(seen)
		var want []string
		for _, f := range a.Component.Files(stateDir) {
			want = append(want, rel(f))
		}
		slices.Sort(want)
		if !slices.Equal(seen, want) {
			t.Errorf("%s's container holds\n  %q\nwant (what its flags name)\n  %q", a.Name, seen, want)
		}
		checkLeastPrivilege(t, a.Name+"'s container", a.Name, a.Component.Role, seen)
	}
}

// checkLeastPrivilege holds the files (relative to the state directory)
// actor name of role is given to #57's rule: the CA's key and the etcd
// admin's certificate to none, etcd's files to members and apiservers
// only, an apiserver no etcd key but its client's, a member no other
// member's key, every actor its own kubeconfig alone.
func checkLeastPrivilege(t *testing.T, what, name string, role provider.Role, files []string) {
	t.Helper()
	for _, f := range files {
		etcd := strings.HasPrefix(f, "pki/etcd/")
		key := strings.HasSuffix(f, ".key")
		if f == "pki/ca.key" || strings.HasPrefix(f, "pki/etcd/admin.") ||
			(etcd && role != provider.RoleEtcd && role != provider.RoleAPIServer) ||
			(etcd && key && role == provider.RoleAPIServer && f != "pki/etcd/apiserver-etcd-client.key") ||
			(etcd && key && role == provider.RoleEtcd && !strings.HasPrefix(f, "pki/etcd/"+name+".") && !strings.HasPrefix(f, "pki/etcd/"+name+"-peer.")) ||
			(strings.HasPrefix(f, "kubeconfigs/") && f != "kubeconfigs/"+name+".kubeconfig") {
			t.Errorf("%s holds %s", what, f)
		}
	}
}

// checkProcessCredentials holds what each running actor of the process
// cluster in stateDir is given (the files of the state directory its argv,
// read from /proc, names) to least privilege, and to the plan's own.
func checkProcessCredentials(t *testing.T, stateDir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(stateDir, "cluster.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Actors []struct {
			Name string        `json:"name"`
			Role provider.Role `json:"role"`
			PID  int           `json:"pid"`
			Args []string      `json:"args"`
		} `json:"actors"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Actors) == 0 {
		t.Fatal("cluster.json lists no actors")
	}
	for _, a := range st.Actors {
		cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(a.PID), "cmdline"))
		if err != nil {
			t.Fatalf("%s (pid %d): %v", a.Name, a.PID, err)
		}
		argv := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		if len(argv) < 2 || !slices.Equal(argv[1:], a.Args) {
			t.Fatalf("%s (pid %d) runs %q, cluster.json says %q", a.Name, a.PID, argv, a.Args)
		}
		var files []string
		for _, f := range (provider.Component{Name: a.Name, Args: argv[1:]}).Files(stateDir) {
			r, _ := filepath.Rel(stateDir, f)
			files = append(files, r)
		}
		if len(files) == 0 && a.Role != provider.RoleRegistry {
			t.Errorf("%s is given no credentials: %q", a.Name, argv)
		}
		checkLeastPrivilege(t, a.Name+"'s argv", a.Name, a.Role, files)
	}
}

// containerFiles are the regular files under dir in container id, relative
// to dir's parent's parent (the state directory); none when dir is not
// there.
func containerFiles(ctx context.Context, t *testing.T, id, dir string) []string {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", "cp", id+":"+dir, "-")
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if strings.Contains(errb.String(), "Could not find the file") || strings.Contains(errb.String(), "No such container:path") {
			return nil
		}
		t.Fatalf("docker cp %s:%s: %v: %s", id, dir, err, errb.String())
	}
	var files []string
	tr := tar.NewReader(&out)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("docker cp %s:%s: %v", id, dir, err)
		}
		if h.Typeflag == tar.TypeReg {
			files = append(files, filepath.Join(filepath.Base(dir), strings.TrimPrefix(filepath.Clean(h.Name), filepath.Base(dir)+"/")))
		}
	}
	return files
}

// dockerActor is an actor as docker.json records it.
type dockerActor struct {
	Name      string             `json:"name"`
	Container string             `json:"container"`
	Component provider.Component `json:"component"`
}

// dockerActors are the actors of the docker cluster in stateDir.
func dockerActors(t *testing.T, stateDir string) []dockerActor {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(stateDir, docker.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Actors []dockerActor `json:"actors"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st.Actors
}
