package nodelabels

import "testing"

func TestKubeletMaySet(t *testing.T) {
	for key, want := range map[string]bool{
		"example.com/rack":                       true,
		"plain":                                  true,
		"kubernetes.io/hostname":                 true,
		"topology.kubernetes.io/zone":            true,
		"kubelet.kubernetes.io/anything":         true,
		"x.node.kubernetes.io/anything":          true,
		"node-role.kubernetes.io/worker":         false,
		"node-restriction.kubernetes.io/zone":    false,
		"a.node-restriction.kubernetes.io/zone":  false,
		"k8s.io/other":                           false,
		"example.kubernetes.io.attacker.com/key": true,
	} {
		if got := KubeletMaySet(key); got != want {
			t.Errorf("KubeletMaySet(%q) = %v, want %v", key, got, want)
		}
	}
}
