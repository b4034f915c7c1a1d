package endpointslice

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller"
	"github.com/kstep-dev/kstep/cluster/controller/endpoints"
	"github.com/kstep-dev/kstep/cluster/trace"
	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Step ⑧'s endpoints.updated comes from exactly one of the Endpoints and
// EndpointSlice controllers, the one Options.EndpointsStamp names: once
// per pod, when the write listing it as ready is acknowledged.
func TestEndpointsStampGoesToOneController(t *testing.T) {
	for _, stamp := range []string{"", controller.StampEndpoints, controller.StampEndpointSlices} {
		t.Run("stamp="+stamp, func(t *testing.T) {
			c := testenv.StartControllerCluster(t, "stamp")
			sinks := map[string]*testenv.SyncBuffer{}
			for name, build := range map[string]func(*controller.Context) controller.Controller{"endpoints": endpoints.New, "endpointslice": New} {
				sinks[name] = &testenv.SyncBuffer{}
				tracer := trace.New("controller-manager", sinks[name], 0)
				t.Cleanup(func() { _ = tracer.Close() }) // after the controllers stop
				cc := testenv.ControllerContext(t, c.API.Config)
				cc.Tracer, cc.Options.EndpointsStamp = tracer, stamp
				testenv.RunController(t, build(cc), cc)
			}
			ns := c.Namespace(t)
			service(t, c, ns, "web", httpService("web"))
			var uids []types.UID
			for i := range 3 {
				uids = append(uids, createPod(t, c, ns, fmt.Sprintf("web-%d", i), "web", 8080, false).UID)
			}
			stamper, silent := "endpoints", "endpointslice"
			if stamp == controller.StampEndpointSlices {
				stamper, silent = silent, stamper
			}
			once := func(got map[types.UID]int, n int) error {
				for _, u := range uids {
					if got[u] != n {
						return fmt.Errorf("stamps %v", got)
					}
				}
				if len(got) != len(uids) {
					return fmt.Errorf("stamps %v", got)
				}
				return nil
			}
			testenv.Eventually(t, 10*time.Second, stamper+" stamps each pod once", func() (bool, error) {
				err := once(sinks[stamper].PodStamps(t, trace.EndpointsUpdated), 1)
				return err == nil, err
			})
			// Ready → not ready → ready: stamped again, by the same one.
			setReady(t, c, ns, "web-1", corev1.ConditionFalse)
			time.Sleep(300 * time.Millisecond)
			setReady(t, c, ns, "web-1", corev1.ConditionTrue)
			testenv.Eventually(t, 10*time.Second, stamper+" stamps web-1 again", func() (bool, error) {
				got := sinks[stamper].PodStamps(t, trace.EndpointsUpdated)
				return got[uids[1]] == 2 && got[uids[0]] == 1, fmt.Errorf("stamps %v", got)
			})
			if got := sinks[silent].PodStamps(t, trace.EndpointsUpdated); len(got) != 0 {
				t.Fatalf("%s stamped too: %v", silent, got)
			}
		})
	}
}

// What a user sees: kubectl lists the Service's slices by its label.
func TestKubectlGetEndpointSlices(t *testing.T) {
	c := testenv.StartControllerCluster(t, "eps", New)
	kubectl := testenv.NewKubectl(t, c.API.URL, "")
	ns := c.Namespace(t)
	svc := service(t, c, ns, "web", httpService("web"))
	service(t, c, ns, "api", httpService("api"))
	for i := range 3 {
		createPod(t, c, ns, fmt.Sprintf("web-%d", i), "web", 8080, false)
	}
	createPod(t, c, ns, "api-0", "api", 9090, false)
	v := waitView(t, c, ns, svc, ManagedBy, "3 ready", func(v view) error {
		if countConds(v)[readyConds] != 3 {
			return fmt.Errorf("conditions %v", countConds(v))
		}
		return nil
	})
	out := kubectl.Run("get", "endpointslices", "-n", ns, "-l", "kubernetes.io/service-name=web")
	lines := strings.Split(out, "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAME ADDRESSTYPE PORTS ENDPOINTS AGE" {
		t.Fatalf("kubectl output:\n%s", out)
	}
	f := strings.Fields(lines[1])
	if f[0] != v.slices[0].Name || f[1] != "IPv4" || f[2] != "8080" || strings.Count(f[3], ",") != 2 || !strings.HasPrefix(f[0], "web-") {
		t.Fatalf("row %q, slice %s", lines[1], v.slices[0].Name)
	}
	for _, ep := range v.byPod {
		if !strings.Contains(f[3], ep.Addresses[0]) {
			t.Errorf("row %q lacks %s", lines[1], ep.Addresses[0])
		}
	}
}
