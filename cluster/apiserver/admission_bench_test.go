package apiserver_test

import (
	"context"
	"testing"

	"github.com/kstep-dev/kstep/internal/testenv"
)

// The cost admission adds to a pod create when no LimitRange, quota or
// webhook applies (the bench and loadgen case): the full chain against the
// chain of defaulting and validation alone, on a live server's caches.
//
//	go test ./cluster/apiserver/ -run '^$' -bench Admission -benchmem
func BenchmarkAdmission(b *testing.B) {
	url, _ := testenv.Etcd(b)
	e := testenv.StartAPIServer(b, url, nil)
	pod := testPod("bench")
	pod.Namespace = "default"
	for _, tc := range []struct {
		name    string
		plugins bool
	}{{"defaulting+validation", false}, {"full chain", true}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := e.Server.AdmitPodCreate(context.Background(), pod, tc.plugins); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
