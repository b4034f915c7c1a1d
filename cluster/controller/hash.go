package controller

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/dump"
	"k8s.io/apimachinery/pkg/util/rand"
)

// ComputeHash is upstream's pod-template hash (pkg/controller.ComputeHash):
// FNV-1a/32 over the template's deep dump (dump.ForHash, what upstream's
// hashutil.DeepHashObject writes), then, when set, the collision count as
// 4 little-endian bytes in an 8-byte buffer, rendered with
// rand.SafeEncodeString. The same template and count give the same hash as
// a real kube-controller-manager built on the same k8s.io/api. It names a
// Deployment's ReplicaSets (pod-template-hash) and the template revision of
// a DaemonSet's or StatefulSet's pods (controller-revision-hash).
func ComputeHash(template *corev1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%v", dump.ForHash(*template))
	if collisionCount != nil {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(*collisionCount))
		_, _ = h.Write(b)
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}
