package apiserver

import (
	"context"
	"net/http/httptest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AdmitPodCreate runs what a pod create goes through between decoding and
// etcd (system fields, the chain, the quota gate) on a copy of pod, for
// benchmarks. plugins=false runs the chain kstep had before admission
// plugins: defaulting and validation only.
func (s *Server) AdmitPodCreate(ctx context.Context, pod *corev1.Pod, plugins bool) error {
	res := s.resources[corev1.SchemeGroupVersion.WithResource("pods")]
	q := &request{s: s, res: res, r: httptest.NewRequest("POST", "/api/v1/namespaces/default/pods", nil).WithContext(ctx),
		w: httptest.NewRecorder(), user: User{Name: "system:admin", Groups: []string{"system:masters"}}}
	obj := pod.DeepCopy()
	prepareForCreate(res, obj, metav1.Now())
	if !plugins {
		saved := s.chain
		defer func() { s.chain = saved }()
		s.chain = Chain{Mutating: []MutatingAdmission{defaulting{}}}
		return q.admit(Create, "", obj, nil)
	}
	if err := q.admit(Create, "", obj, nil); err != nil {
		return err
	}
	// Checked as a dry run: a benchmark charges no quota.
	return s.quota.admit(ctx, res, obj, true)
}
