package apiserver

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	restclientwatch "k8s.io/client-go/rest/watch"
)

// What one watch event and one list cost each side in JSON and protobuf:
// the apiserver encodes an event once (the watch cache's Entry) and frames
// it per watcher; every client decodes every frame it gets.
//
//	go test ./cluster/apiserver -run '^$' -bench 'Protobuf|JSON' -benchmem

var encodings = []struct {
	name string
	out  output
	mt   string
}{{"json", outJSON, "application/json"}, {"protobuf", outProtobuf, protobufType}}

// encodeEvent encodes pod and writes its frame as a watch does.
func encodeEvent(b testing.TB, bw *bufio.Writer, out output, res *resource, pod runtime.Object) {
	if out == outProtobuf {
		raw, err := marshalProto(pod)
		if err != nil {
			b.Fatal(err)
		}
		writeProtoFrame(bw, string(watch.Modified), res.pb.item, raw)
		return
	}
	j, err := json.Marshal(pod)
	if err != nil {
		b.Fatal(err)
	}
	writeFrame(bw, watch.Modified, j)
}

// BenchmarkWatchEventEncode: the apiserver's encode of one event plus its
// frame (the encode is once per event, the frame once per watcher).
func BenchmarkWatchEventEncode(b *testing.B) {
	res := servedResource(b, "pods")
	pod := realisticPod(1, 0)
	for _, enc := range encodings {
		b.Run(enc.name, func(b *testing.B) {
			bw := bufio.NewWriterSize(io.Discard, 32<<10)
			b.ReportAllocs()
			for b.Loop() {
				encodeEvent(b, bw, enc.out, res, pod)
			}
			_ = bw.Flush()
		})
	}
}

// BenchmarkWatchFrame: one watcher's framing of an already-encoded event,
// what the fan-out pays per event per watcher.
func BenchmarkWatchFrame(b *testing.B) {
	res := servedResource(b, "pods")
	pod := realisticPod(1, 0)
	raw, err := marshalProto(pod)
	if err != nil {
		b.Fatal(err)
	}
	j, err := json.Marshal(pod)
	if err != nil {
		b.Fatal(err)
	}
	for _, enc := range encodings {
		b.Run(enc.name, func(b *testing.B) {
			bw := bufio.NewWriterSize(io.Discard, 32<<10)
			b.ReportAllocs()
			for b.Loop() {
				if enc.out == outProtobuf {
					writeProtoFrame(bw, string(watch.Modified), res.pb.item, raw)
				} else {
					writeFrame(bw, watch.Modified, j)
				}
			}
			_ = bw.Flush()
		})
	}
}

// repeat is an endless body of one frame over and over.
type repeat struct {
	frame []byte
	off   int
}

func (r *repeat) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.frame[r.off:])
		n += c
		r.off = (r.off + c) % len(r.frame)
	}
	return n, nil
}
func (r *repeat) Close() error { return nil }

// BenchmarkWatchEventDecode: a client-go watcher's decode of one event (its
// stream decoder, then the object), what every informer pays per event.
func BenchmarkWatchEventDecode(b *testing.B) {
	res := servedResource(b, "pods")
	pod := realisticPod(1, 0)
	for _, enc := range encodings {
		b.Run(enc.name, func(b *testing.B) {
			var frame frameBuf
			bw := bufio.NewWriter(&frame)
			encodeEvent(b, bw, enc.out, res, pod)
			_ = bw.Flush()
			info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), enc.mt)
			if !ok || info.StreamSerializer == nil {
				b.Fatalf("no stream serializer for %s", enc.mt)
			}
			body := &repeat{frame: frame.b}
			dec := restclientwatch.NewDecoder(
				streaming.NewDecoder(info.StreamSerializer.Framer.NewFrameReader(body), info.StreamSerializer.Serializer),
				scheme.Codecs.UniversalDeserializer())
			b.SetBytes(int64(len(frame.b)))
			b.ReportAllocs()
			for b.Loop() {
				if _, obj, err := dec.Decode(); err != nil || obj.(*corev1.Pod).Name != pod.Name {
					b.Fatalf("decode: %v", err)
				}
			}
		})
	}
}

type frameBuf struct{ b []byte }

func (f *frameBuf) Write(p []byte) (int, error) { f.b = append(f.b, p...); return len(p), nil }

// discardResponse is a ResponseWriter that keeps nothing.
type discardResponse struct{ h http.Header }

func (d *discardResponse) Header() http.Header         { return d.h }
func (d *discardResponse) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardResponse) WriteHeader(int)             {}

const benchListLen = 1000

// BenchmarkListFromCache: a list of 1,000 pods from the watch cache, whose
// entries are already encoded: the apiserver only frames them.
func BenchmarkListFromCache(b *testing.B) {
	res := servedResource(b, "pods")
	for _, enc := range encodings {
		b.Run(enc.name, func(b *testing.B) {
			items := make([][]byte, benchListLen)
			for i := range items {
				var err error
				if enc.out == outProtobuf {
					items[i], err = marshalProto(realisticPod(i, 0))
				} else {
					items[i], err = json.Marshal(realisticPod(i, 0))
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			w := &discardResponse{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				writeList(w, enc.out, res, items, "4242", "", nil)
			}
		})
	}
}

// benchPods is the benchmarks' list: benchListLen realistic pods.
func benchPods() []runtime.Object {
	objs := make([]runtime.Object, benchListLen)
	for i := range objs {
		objs[i] = realisticPod(i, 0)
	}
	return objs
}

// BenchmarkListEncode: a list of 1,000 pods encoded from objects (a list
// from etcd, or an entry's first encoding): encode and frame.
func BenchmarkListEncode(b *testing.B) {
	res := servedResource(b, "pods")
	objs := benchPods()
	for _, enc := range encodings {
		b.Run(enc.name, func(b *testing.B) {
			w := &discardResponse{h: http.Header{}}
			q := &request{w: w}
			q.res = res
			b.ReportAllocs()
			for b.Loop() {
				if err := q.writeObjects(enc.out, objs, "4242", ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkListDecode: a client's decode of a list of 1,000 pods.
func BenchmarkListDecode(b *testing.B) {
	res := servedResource(b, "pods")
	objs := benchPods()
	for _, enc := range encodings {
		b.Run(enc.name, func(b *testing.B) {
			var body frameBuf
			w := &bodyResponse{discardResponse{h: http.Header{}}, &body}
			q := &request{w: w, res: res}
			if err := q.writeObjects(enc.out, objs, "4242", ""); err != nil {
				b.Fatal(err)
			}
			info, _ := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), enc.mt)
			b.SetBytes(int64(len(body.b)))
			b.ReportAllocs()
			for b.Loop() {
				obj, _, err := info.Serializer.Decode(body.b, nil, &corev1.PodList{})
				if err != nil || len(obj.(*corev1.PodList).Items) != benchListLen {
					b.Fatalf("decode: %v", err)
				}
			}
		})
	}
}

type bodyResponse struct {
	discardResponse
	body *frameBuf
}

func (r *bodyResponse) Write(p []byte) (int, error) { return r.body.Write(p) }
