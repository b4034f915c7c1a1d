package apiserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
)

func servedResource(t testing.TB, resourceName string) *resource {
	t.Helper()
	for _, r := range resources() {
		if r.gvr.Resource == resourceName && r.gvr.Group == "" {
			return r
		}
	}
	t.Fatalf("no resource %q", resourceName)
	return nil
}

// realisticPod is what the load's pods look like once scheduled and
// running: a few labels, an owner, one container with requests, a status
// with conditions.
func realisticPod(i int, annotation int) *corev1.Pod {
	p := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("load-7d9f8c6b5-%05d", i), Namespace: "load-3", UID: "6f1c2a8e-8b1d-4c7e-9f3a-2b6d1e0c9a7f",
			ResourceVersion: fmt.Sprint(100000 + i), Generation: 1,
			CreationTimestamp: metav1.Unix(1700000000, 0),
			Labels:            map[string]string{"app": "load", "kstep.dev/job": "j3", "pod-template-hash": "7d9f8c6b5"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "load-7d9f8c6b5",
				UID: "0a9e7c5b-3d1f-4e2a-8b6c-9d0e1f2a3b4c", Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true)}},
		},
		Spec: corev1.PodSpec{
			NodeName: "hollow-node-0042", SchedulerName: "default-scheduler", RestartPolicy: corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: ptrTo(int64(30)), DNSPolicy: corev1.DNSClusterFirst, ServiceAccountName: "default",
			Containers: []corev1.Container{{Name: "app", Image: "registry.kstep.local/app:v1", ImagePullPolicy: corev1.PullIfNotPresent,
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: apiresource.MustParse("10m"), corev1.ResourceMemory: apiresource.MustParse("16Mi")}},
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile}},
			Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists,
				Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptrTo(int64(300))}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, HostIP: "10.0.0.42", PodIP: "10.244.42.7", QOSClass: corev1.PodQOSBurstable,
			StartTime: ptrTo(metav1.Unix(1700000001, 0)),
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Unix(1700000000, 0)},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Unix(1700000001, 0)},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Unix(1700000002, 0)},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Unix(1700000002, 0)},
			},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, Image: "registry.kstep.local/app:v1",
				ImageID: "registry.kstep.local/app@sha256:0123456789abcdef", ContainerID: "kstep://0123456789abcdef",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Unix(1700000002, 0)}}}},
		},
	}
	if annotation > 0 {
		p.Annotations = map[string]string{"big": strings.Repeat("x", annotation)}
	}
	return p
}

func ptrTo[T any](v T) *T { return &v }

// The bytes kstep frames around cached messages are apimachinery's: an
// object's envelope, a list's, and a watch frame (ordinary, 2- and 3-byte
// varint lengths alike), and client-go's decoders read them back.
func TestProtobufWireMatchesApimachinery(t *testing.T) {
	res := servedResource(t, "pods")
	ser := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	encode := func(obj runtime.Object) []byte {
		var b bytes.Buffer
		if err := ser.Encode(obj, &b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	pods := []corev1.Pod{*realisticPod(1, 0), *realisticPod(2, 200), *realisticPod(3, 40000)}

	for i := range pods {
		got, err := encodeObjectProto(&pods[i], res)
		if err != nil {
			t.Fatal(err)
		}
		if want := encode(&pods[i]); !bytes.Equal(got, want) {
			t.Fatalf("pod %d envelope differs from apimachinery's:\n got %q\nwant %q", i, got, want)
		}
	}
	// A kindless object is named from the scheme, not sent kindless.
	kindless := realisticPod(4, 0)
	kindless.TypeMeta = metav1.TypeMeta{}
	got, err := encodeObjectProto(kindless, res)
	if err != nil {
		t.Fatal(err)
	}
	if want := encode(realisticPod(4, 0)); !bytes.Equal(got, want) {
		t.Fatalf("kindless pod: envelope differs from the kinded one's")
	}

	for _, n := range []int{0, 1, 3} {
		items := make([][]byte, n)
		for i := range items {
			if items[i], err = marshalProto(&pods[i]); err != nil {
				t.Fatal(err)
			}
		}
		remaining := int64(12)
		got, err := encodeListProto(res, items, "4242", "tok", &remaining)
		if err != nil {
			t.Fatal(err)
		}
		list := &corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"},
			ListMeta: metav1.ListMeta{ResourceVersion: "4242", Continue: "tok", RemainingItemCount: &remaining}, Items: pods[:n]}
		if want := encode(list); !bytes.Equal(got, want) {
			t.Fatalf("list of %d: envelope differs from apimachinery's", n)
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(got, nil, nil)
		if err != nil {
			t.Fatalf("list of %d: client decode: %v", n, err)
		}
		dec := obj.(*corev1.PodList)
		if dec.ResourceVersion != "4242" || dec.Continue != "tok" || len(dec.Items) != n {
			t.Fatalf("list of %d decoded as %+v", n, dec.ListMeta)
		}
		for i := range dec.Items {
			want := pods[i]
			want.TypeMeta = metav1.TypeMeta{}
			if !apiequality.Semantic.DeepEqual(dec.Items[i], want) {
				t.Fatalf("list of %d: item %d decoded differently", n, i)
			}
		}
	}

	raw := protobuf.NewRawSerializer(scheme.Scheme, scheme.Scheme)
	wantFrames := func(evs ...metav1.WatchEvent) []byte {
		var b bytes.Buffer
		enc := streaming.NewEncoder(protobuf.LengthDelimitedFramer.NewFrameWriter(&b), raw)
		for i := range evs {
			if err := enc.Encode(&evs[i]); err != nil {
				t.Fatal(err)
			}
		}
		return b.Bytes()
	}
	var gotBuf bytes.Buffer
	bw := bufio.NewWriterSize(&gotBuf, 64) // smaller than a frame: writes straddle flushes
	var want []metav1.WatchEvent
	for i := range pods {
		msg, err := marshalProto(&pods[i])
		if err != nil {
			t.Fatal(err)
		}
		writeProtoFrame(bw, string(watch.Modified), res.pb.item, msg)
		want = append(want, metav1.WatchEvent{Type: string(watch.Modified), Object: runtime.RawExtension{Raw: encode(&pods[i])}})
	}
	expired := apierrors.NewResourceExpired("too old resource version: 1 (5)").ErrStatus
	if err := writeWatchStatus(bw, outProtobuf, &expired); err != nil {
		t.Fatal(err)
	}
	want = append(want, metav1.WatchEvent{Type: string(watch.Error), Object: runtime.RawExtension{Raw: encode(&expired)}})
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if g, w := gotBuf.Bytes(), wantFrames(want...); !bytes.Equal(g, w) {
		i := 0
		for i < len(g) && i < len(w) && g[i] == w[i] {
			i++
		}
		t.Fatalf("watch frames (%d bytes) differ from apimachinery's streaming encoder's (%d bytes) at byte %d:\n got %q\nwant %q",
			len(g), len(w), i, g[max(0, i-8):min(len(g), i+16)], w[max(0, i-8):min(len(w), i+16)])
	}
}

// Protobuf is chosen only when it is the first acceptable type and the
// answer has a protobuf encoding; kubectl's Accept headers are unchanged.
func TestNegotiateProtobuf(t *testing.T) {
	for _, tc := range []struct {
		accept string
		proto  bool
		want   output
		ok     bool
	}{
		{"application/vnd.kubernetes.protobuf,application/json", true, outProtobuf, true},
		{"application/vnd.kubernetes.protobuf, */*", true, outProtobuf, true},
		{"application/vnd.kubernetes.protobuf;stream=watch", true, outProtobuf, true},
		{"application/vnd.kubernetes.protobuf,application/json", false, outJSON, true},
		{"application/vnd.kubernetes.protobuf", false, outJSON, false},
		{"application/json,application/vnd.kubernetes.protobuf", true, outJSON, true},
		{"application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json", true, outJSON, true},
		{"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", true, outJSON, false},
		{"application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", true, outTable, true},
		{"application/json", true, outJSON, true},
		{"", true, outJSON, true},
		{"application/yaml", true, outYAML, true},
	} {
		r := httptest.NewRequest("GET", "/api/v1/pods", nil)
		if tc.accept != "" {
			r.Header.Set("Accept", tc.accept)
		}
		got, ok := negotiate(r, tc.proto)
		if got != tc.want || ok != tc.ok {
			t.Errorf("negotiate(%q, proto=%v) = %v, %v; want %v, %v", tc.accept, tc.proto, got, ok, tc.want, tc.ok)
		}
	}
}

// The watch cache's entries encode through the same codec both ways.
func TestCacheCodecProtobufIsBareMessage(t *testing.T) {
	res := servedResource(t, "pods")
	pod := realisticPod(1, 0)
	b, err := cacheCodec{r: res}.EncodeProtobuf(pod)
	if err != nil {
		t.Fatal(err)
	}
	var back corev1.Pod
	if err := back.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	want := *pod
	want.TypeMeta = metav1.TypeMeta{}
	if !apiequality.Semantic.DeepEqual(back, want) {
		j, _ := json.Marshal(back)
		t.Fatalf("bare message decoded as %s", j)
	}
}
