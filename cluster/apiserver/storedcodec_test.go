package apiserver

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// storedPod is a pod as kstep stores it after the kubelet's status write:
// managed fields, owner, probes, conditions, container statuses.
func storedPod() *corev1.Pod {
	now := metav1.Unix(1700000000, 0)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "rs-1-abcde", Namespace: "kstep-load-0", UID: "0b8b3c1e-5a4f-4d0e-9d3e-1f2a3b4c5d6e",
			Labels: map[string]string{"app": "rs-1", "kstep.dev/job": "saturation"}, CreationTimestamp: now,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs-1", UID: "1c9c", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kstep", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &now,
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{}}}}}`)}}}},
		Spec: corev1.PodSpec{NodeName: "hollow-7", Containers: []corev1.Container{{Name: "app", Image: "registry.kstep.local/kstep-app:v1",
			Ports:          []corev1.ContainerPort{{ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Resources:      corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse("10m")}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 1}}},
			Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.7.3", HostIP: "10.0.0.7", StartTime: &now,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, ContainerID: "sim://c1", Image: "registry.kstep.local/kstep-app:v1",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}},
	}
}

// Every served kind stores as protobuf, and a pod comes back from either
// medium equal to what was stored; a value written as JSON (by an
// apiserver run with --storage-media-type=application/json, or before
// protobuf was the default) still reads.
func TestStoredCodecBothMedia(t *testing.T) {
	var pods *resource
	for _, r := range resources() {
		if !storesProtobuf(r) {
			t.Errorf("%s does not store as protobuf", r.gvr)
		}
		if r.gvr.Resource == "pods" && r.gvr.Group == "" {
			pods = r
		}
	}
	for _, proto := range []bool{false, true} {
		r := *pods
		r.storeProtobuf = proto
		want := storedPod()
		val, err := encodeStored(&r, want.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.HasPrefix(val, protobufPrefix); got != proto {
			t.Errorf("protobuf %v: value opens %q", proto, val[:4])
		}
		// Read back by a resource of the other medium: either is read.
		other := *pods
		other.storeProtobuf = !proto
		back, err := decodeStored(&other, val, 42)
		if err != nil {
			t.Fatal(err)
		}
		want.ResourceVersion = "42"
		pods.setTypeMeta(want)
		if !equality.Semantic.DeepEqual(back, want) {
			t.Errorf("protobuf %v: decoded\n%+v\nwant\n%+v", proto, back, want)
		}
	}
}

// BenchmarkStoredCodec is what every write costs each apiserver's watch
// cache (decode) and the writer (encode), per medium.
func BenchmarkStoredCodec(b *testing.B) {
	var pods *resource
	for _, r := range resources() {
		if r.gvr.Resource == "pods" && r.gvr.Group == "" {
			pods = r
		}
	}
	for _, medium := range []struct {
		name  string
		proto bool
	}{{"json", false}, {"protobuf", true}} {
		r := *pods
		r.storeProtobuf = medium.proto
		val, err := encodeStored(&r, storedPod())
		if err != nil {
			b.Fatal(err)
		}
		b.Run("encode/"+medium.name, func(b *testing.B) {
			p := storedPod()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := encodeStored(&r, p); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(val)), "bytes")
		})
		b.Run("decode/"+medium.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decodeStored(&r, val, 42); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
