package endpointslice

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func addresses(prefix string, n int) []corev1.EndpointAddress {
	out := make([]corev1.EndpointAddress, n)
	for i := range out {
		out[i] = corev1.EndpointAddress{IP: fmt.Sprintf("%s.%d.%d", prefix, i/250, i%250+1)}
	}
	return out
}

func createEndpoints(t *testing.T, c *testenv.ControllerCluster, ns, name string, labels map[string]string, subsets ...corev1.EndpointSubset) {
	t.Helper()
	if _, err := c.Client.CoreV1().Endpoints(ns).Create(c.Ctx, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Subsets: subsets}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestMirroring(t *testing.T) {
	c := testenv.StartControllerCluster(t, "eps", NewMirroring)
	ns := c.Namespace(t)
	selectorless := corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}
	port := func(name string, p int32) []corev1.EndpointPort {
		return []corev1.EndpointPort{{Name: name, Port: p, Protocol: corev1.ProtocolTCP}}
	}

	svc := service(t, c, ns, "ext", selectorless)
	createEndpoints(t, c, ns, "ext", map[string]string{"team": "a"},
		corev1.EndpointSubset{Addresses: addresses("192.0", 150), NotReadyAddresses: addresses("198.51", 3), Ports: port("http", 80)},
		corev1.EndpointSubset{Addresses: addresses("203.0", 2), Ports: port("https", 443)})

	t.Run("user Endpoints mirrored", func(t *testing.T) {
		v := waitView(t, c, ns, svc, MirroringManagedBy, "155 mirrored endpoints", func(v view) error {
			cc := map[bool]int{}
			for _, ep := range v.byPod {
				cc[isTrue(ep.Conditions.Ready)]++
			}
			if !slices.Equal(v.sizes, []int{2, 53, 100}) || cc[true] != 152 || cc[false] != 3 {
				return fmt.Errorf("sizes %v, ready %v", v.sizes, cc)
			}
			return nil
		})
		for _, s := range v.slices {
			if s.Labels["team"] != "a" || s.AddressType != discoveryv1.AddressTypeIPv4 {
				t.Errorf("slice %s: labels %v addressType %s", s.Name, s.Labels, s.AddressType)
			}
		}
	})

	t.Run("an update propagates", func(t *testing.T) {
		ep, err := c.Client.CoreV1().Endpoints(ns).Get(c.Ctx, "ext", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ep.Subsets = ep.Subsets[1:]
		ep.Subsets[0].Addresses = addresses("203.0", 5)
		if _, err := c.Client.CoreV1().Endpoints(ns).Update(c.Ctx, ep, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitView(t, c, ns, svc, MirroringManagedBy, "5 mirrored endpoints", func(v view) error {
			if !slices.Equal(v.sizes, []int{5}) || len(slicesOf(t, c, ns, "ext")) != 1 {
				return fmt.Errorf("sizes %v", v.sizes)
			}
			return nil
		})
	})

	t.Run("at most 1000 addresses mirrored", func(t *testing.T) {
		big := service(t, c, ns, "big", selectorless)
		createEndpoints(t, c, ns, "big", nil, corev1.EndpointSubset{Addresses: addresses("10.1", 1200), Ports: port("http", 80)})
		waitView(t, c, ns, big, MirroringManagedBy, "1000 mirrored", func(v view) error {
			if len(v.byPod) != 1000 || len(v.sizes) != 10 {
				return fmt.Errorf("%d endpoints in %v", len(v.byPod), v.sizes)
			}
			return nil
		})
	})

	t.Run("skip-mirror is respected", func(t *testing.T) {
		service(t, c, ns, "skip", selectorless)
		createEndpoints(t, c, ns, "skip", map[string]string{LabelSkipMirror: "true"}, corev1.EndpointSubset{Addresses: addresses("10.2", 3), Ports: port("http", 80)})
		testenv.Consistently(t, time.Second, "skip not mirrored", func() (bool, error) {
			n := len(slicesOf(t, c, ns, "skip"))
			return n == 0, fmt.Errorf("%d slices", n)
		})
		// Labelled later: what was mirrored goes.
		if _, err := c.Client.CoreV1().Endpoints(ns).Patch(c.Ctx, "ext", types.MergePatchType, []byte(`{"metadata":{"labels":{"`+LabelSkipMirror+`":"true"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 10*time.Second, "ext's slices gone", func() (bool, error) {
			n := len(slicesOf(t, c, ns, "ext"))
			return n == 0, fmt.Errorf("%d slices", n)
		})
	})

	t.Run("Endpoints of a Service with a selector are not mirrored", func(t *testing.T) {
		service(t, c, ns, "sel", httpService("sel"))
		createEndpoints(t, c, ns, "sel", nil, corev1.EndpointSubset{Addresses: addresses("10.3", 3), Ports: port("http", 80)})
		testenv.Consistently(t, time.Second, "sel not mirrored", func() (bool, error) {
			n := len(slicesOf(t, c, ns, "sel"))
			return n == 0, fmt.Errorf("%d slices", n)
		})
	})

	t.Run("deleted Endpoints take their slices", func(t *testing.T) {
		if err := c.Client.CoreV1().Endpoints(ns).Delete(c.Ctx, "big", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 10*time.Second, "big's slices gone", func() (bool, error) {
			n := len(slicesOf(t, c, ns, "big"))
			return n == 0, fmt.Errorf("%d slices", n)
		})
	})
}

func isTrue(b *bool) bool { return b != nil && *b }
