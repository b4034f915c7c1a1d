package apiserver

import (
	"bytes"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
)

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
		want := realisticPod(1, 0)
		want.ResourceVersion = ""
		val, err := encodeStored(&r, want.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.HasPrefix(val, protoMagic); got != proto {
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
		val, err := encodeStored(&r, realisticPod(1, 0))
		if err != nil {
			b.Fatal(err)
		}
		b.Run("encode/"+medium.name, func(b *testing.B) {
			p := realisticPod(1, 0)
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
