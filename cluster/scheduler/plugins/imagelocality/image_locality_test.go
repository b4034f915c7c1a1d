package imagelocality

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/scheduler/cache"
	"github.com/kstep-dev/kstep/cluster/scheduler/internal/st"
)

func TestScore(t *testing.T) {
	const mib = 1024 * 1024
	nodes := []*corev1.Node{
		st.MakeNode().Name("big").Images(map[string]int64{"registry/app:v1": 500 * mib, "registry/sidecar:latest": 300 * mib}).Obj(),
		st.MakeNode().Name("small").Images(map[string]int64{"registry/app:v1": 500 * mib}).Obj(),
		st.MakeNode().Name("tiny").Images(map[string]int64{"registry/tiny:v1": 10 * mib}).Obj(),
		st.MakeNode().Name("none").Obj(),
	}
	snap := cache.NewSnapshot(nil, nodes)
	tests := []struct {
		name string
		pod  *corev1.Pod
		want map[string]int64
	}{
		// app: 500 MiB × 2/4 nodes = 250 MiB → 100 × (250−23)/(1000−23) = 23.
		{"one container", st.MakePod().Image("registry/app:v1").Obj(), map[string]int64{"big": 23, "small": 23, "tiny": 0, "none": 0}},
		// sidecar without a tag is normalized to :latest; 300 × 1/4 = 75.
		// two containers: (250+75−23)/(2000−23) → 15 and (250−23)/1977 → 11.
		{"two containers", st.MakePod().Image("registry/app:v1").Container("registry/sidecar").Obj(), map[string]int64{"big": 15, "small": 11, "tiny": 0, "none": 0}},
		{"below the threshold", st.MakePod().Image("registry/tiny:v1").Obj(), map[string]int64{"tiny": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, want := range tt.want {
				if got := Score(tt.pod, snap.Get(name), len(snap.List())); got != want {
					t.Errorf("%s: %d, want %d", name, got, want)
				}
			}
		})
	}
	if got := NormalizedImageName("nginx"); got != "nginx:latest" {
		t.Errorf("NormalizedImageName(nginx) = %q", got)
	}
	if got := NormalizedImageName("host:5000/nginx"); got != "host:5000/nginx:latest" {
		t.Errorf("NormalizedImageName(host:5000/nginx) = %q", got)
	}
}
