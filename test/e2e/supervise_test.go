package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// A supervised apiserver SIGKILLed under `kstep up -d` is serving again
// within its backoff, on every provider: the process provider's `kstep
// supervise` (left behind by up -d), docker's restart policy. kstep down
// stops the supervisor too: nothing is restarted after it.
func TestSupervisedAPIServerComesBack(t *testing.T) {
	t.Parallel()
	for _, prov := range []string{"process", "docker"} {
		t.Run(prov, func(t *testing.T) {
			inLane(t, providerLane(prov, false))
			if prov == "docker" {
				needDocker(t)
			}
			kubeconfig, dir := upCLI(t, "--provider", prov, "--etcd-members", "1", "--apiservers", "2",
				"--controller-managers", "1", "--schedulers", "1")
			p, err := provider.Open(provider.Spec{StateDir: dir, StopGrace: 10 * time.Second, ReadyTimeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			var victim provider.Actor
			for _, a := range p.Actors() {
				if a.Name == "apiserver-0" {
					victim = a
				}
			}
			if !victim.Running() {
				t.Fatalf("apiserver-0 not running: %+v", p.Actors())
			}
			cs := clientFor(t, kubeconfig, "kstep") // apiserver-0's context
			ready := func(ctx context.Context) bool {
				_, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
				return err == nil
			}
			// A crash, not a stop: SIGKILL to its process (on docker the
			// container's init) from outside.
			killed := time.Now()
			if err := syscall.Kill(victim.PID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			wentDown := false
			for {
				rctx, rcancel := context.WithTimeout(ctx, time.Second)
				up := ready(rctx)
				rcancel()
				if !up {
					wentDown = true
				}
				var now provider.Actor
				for _, a := range p.Actors() {
					if a.Name == victim.Name {
						now = a
					}
				}
				if up && now.Running() && now.PID != victim.PID {
					break
				}
				if ctx.Err() != nil {
					t.Fatalf("apiserver-0 not serving again 90 s after SIGKILL (went down: %v)\n%s", wentDown, logs(dir))
				}
				time.Sleep(50 * time.Millisecond)
			}
			took := time.Since(killed)
			t.Logf("%s: apiserver-0 SIGKILLed, serving again (new pid) after %v", prov, took.Round(time.Millisecond))
			// Docker's first restart waits 100 ms, kstep supervise's 100 ms;
			// then the apiserver's own start. The ceiling is generous.
			if took > 30*time.Second {
				t.Errorf("serving again after %v; the first backoff is 100 ms", took)
			}

			// kstep down stops the supervisor first: the cluster stays down.
			bin := binary(t)
			if out, err := exec.Command(bin, "down", "--state-dir", dir).CombinedOutput(); err != nil {
				t.Fatalf("kstep down: %v\n%s", err, out)
			}
			time.Sleep(2 * time.Second)
			for _, a := range p.Actors() {
				if a.Running() {
					t.Errorf("%s running again after kstep down", a.Name)
				}
			}
			if prov == "process" {
				if m, _ := filepath.Glob(filepath.Join(dir, "logs", "supervisor.log")); len(m) == 0 {
					t.Error("no supervisor log")
				}
			}
		})
	}
}
