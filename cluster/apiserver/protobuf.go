package apiserver

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// The protobuf wire form, byte for byte what kube-apiserver sends, so
// client-go's decoders read it unchanged:
//
//   - an object or a list is an envelope: "k8s\x00" then a runtime.Unknown
//     {typeMeta: {apiVersion, kind}, raw: the object's own message,
//     contentEncoding: "", contentType: ""} (apimachinery's
//     protobuf.Serializer);
//   - a list's own message is {1: ListMeta, 2: each item's own message}
//     (what the generated PodList marshaling writes), so a list from the
//     watch cache is the entries' cached messages framed, not re-encoded;
//   - a watch stream (Content-Type ...;stream=watch) is frames of a 4-byte
//     big-endian length then a bare metav1.WatchEvent {1: type, 2:
//     RawExtension{1: the object's envelope}} (streaming.Encoder over a
//     LengthDelimitedFramer with the RawSerializer).
//
// The envelope is written around bytes rather than by the serializer so
// that the watch cache's encode-once messages are shared, as its JSON is,
// by every list and watcher; TestProtobufWireMatchesApimachinery holds the
// bytes to apimachinery's.

const watchProtobufType = protobufType + ";stream=watch"

// protoMessage is the generated (gogo) marshaling of every k8s.io/api type,
// the interface apimachinery's serializer uses too.
type protoMessage interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

var protoMagic = []byte{'k', '8', 's', 0}

// The envelope's runtime.Unknown fields (field number << 3 | wire type 2).
const (
	tagTypeMeta = 0x0a
	tagRaw      = 0x12
	// contentEncoding (3) and contentType (4), both empty: the generated
	// marshaling always writes them.
	tagContentEncoding = 0x1a
	tagContentType     = 0x22
	// WatchEvent: type (1), object (2); RawExtension: raw (1).
	tagEventType   = 0x0a
	tagEventObject = 0x12
	tagRawExtRaw   = 0x0a
	// List: metadata (1), items (2).
	tagListMeta  = 0x0a
	tagListItems = 0x12
)

// protoKinds is a resource's protobuf framing: the marshaled
// runtime.TypeMeta of its kind and of its list kind.
type protoKinds struct{ item, list []byte }

// newProtoKinds is r's framing, nil when r's type has no protobuf encoding
// (its clients then get JSON).
func newProtoKinds(r *resource) *protoKinds {
	if _, ok := r.newObj().(protoMessage); !ok {
		return nil
	}
	gv := r.gvr.GroupVersion()
	return &protoKinds{item: typeMetaProto(gv.WithKind(r.kind)), list: typeMetaProto(gv.WithKind(r.kind + "List"))}
}

func typeMetaProto(gvk schema.GroupVersionKind) []byte {
	tm := runtime.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}
	b, _ := tm.Marshal() // strings only: cannot fail
	return b
}

// statusTypeMeta is an error's kind: a Status is "v1" on the wire, as in
// JSON (writeStatus), whatever the resource's group.
var statusTypeMeta = typeMetaProto(schema.GroupVersionKind{Version: "v1", Kind: "Status"})

// marshalProto is obj's own protobuf message.
func marshalProto(obj runtime.Object) ([]byte, error) {
	m, ok := obj.(protoMessage)
	if !ok {
		return nil, fmt.Errorf("%T has no protobuf encoding", obj)
	}
	b := make([]byte, m.Size())
	n, err := m.MarshalToSizedBuffer(b)
	if err != nil {
		return nil, fmt.Errorf("encode %T as protobuf: %w", obj, err)
	}
	if n != len(b) {
		return nil, fmt.Errorf("encode %T as protobuf: Size %d but %d bytes written", obj, len(b), n)
	}
	return b, nil
}

// sov is the length of n as a protobuf varint.
func sov(n int) int {
	s := 1
	for v := uint64(n); v >= 0x80; v >>= 7 {
		s++
	}
	return s
}

// fieldSize is the length of a length-delimited field holding n bytes.
func fieldSize(n int) int { return 1 + sov(n) + n }

// envelopeSize is the length of the envelope of a message of rawLen bytes.
func envelopeSize(tm []byte, rawLen int) int {
	return len(protoMagic) + fieldSize(len(tm)) + fieldSize(rawLen) + fieldSize(0) + fieldSize(0)
}

// appendTag appends a length-delimited field's tag and length n.
func appendTag(b []byte, tag byte, n int) []byte {
	return binary.AppendUvarint(append(b, tag), uint64(n))
}

// appendEnvelopeHead appends the envelope up to its message of rawLen
// bytes, which comes next, then envelopeTail.
func appendEnvelopeHead(b, tm []byte, rawLen int) []byte {
	b = append(b, protoMagic...)
	b = append(appendTag(b, tagTypeMeta, len(tm)), tm...)
	return appendTag(b, tagRaw, rawLen)
}

var envelopeTail = []byte{tagContentEncoding, 0, tagContentType, 0}

// envelope is the envelope of the message raw.
func envelope(tm, raw []byte) []byte {
	b := appendEnvelopeHead(make([]byte, 0, envelopeSize(tm, len(raw))), tm, len(raw))
	return append(append(b, raw...), envelopeTail...)
}

// encodeObjectProto is the envelope of one object, under its own kind. A
// served object always carries its apiVersion and kind (the client decodes
// by the envelope's); one without is named from the scheme, preferring the
// request's group version, rather than sent kindless.
func encodeObjectProto(obj runtime.Object, res *resource) ([]byte, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" {
		kinds, _, err := scheme.Scheme.ObjectKinds(obj)
		if err != nil {
			return nil, fmt.Errorf("encode %T as protobuf: %w", obj, err)
		}
		gvk = kinds[0]
		for _, k := range kinds {
			if k.GroupVersion() == res.gvr.GroupVersion() {
				gvk = k
			}
		}
	}
	raw, err := marshalProto(obj)
	if err != nil {
		return nil, err
	}
	return envelope(typeMetaProto(gvk), raw), nil
}

// encodeListProto is the envelope of res's list of the messages items.
func encodeListProto(res *resource, items [][]byte, rv, cont string, remaining *int64) ([]byte, error) {
	lm := metav1.ListMeta{ResourceVersion: rv, Continue: cont, RemainingItemCount: remaining}
	meta, err := lm.Marshal()
	if err != nil {
		return nil, fmt.Errorf("encode list metadata: %w", err)
	}
	n := fieldSize(len(meta))
	for _, it := range items {
		n += fieldSize(len(it))
	}
	tm := res.pb.list
	b := appendEnvelopeHead(make([]byte, 0, envelopeSize(tm, n)), tm, n)
	b = append(appendTag(b, tagListMeta, len(meta)), meta...)
	for _, it := range items {
		b = append(appendTag(b, tagListItems, len(it)), it...)
	}
	return append(b, envelopeTail...), nil
}

func writeProtobuf(w http.ResponseWriter, code int, body []byte) {
	w.Header().Set("Content-Type", protobufType)
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// writeProtoFrame writes one protobuf watch frame: an event of type t whose
// object is the message raw of kind tm. The frame's head is built in the
// writer's own free buffer and raw written after it, so a cached message
// is never copied into a frame of its own and a frame allocates nothing.
func writeProtoFrame(bw *bufio.Writer, t string, tm, raw []byte) {
	env := envelopeSize(tm, len(raw))
	ext := fieldSize(env)
	ev := fieldSize(len(t)) + fieldSize(ext)
	head := binary.BigEndian.AppendUint32(bw.AvailableBuffer(), uint32(ev))
	head = append(appendTag(head, tagEventType, len(t)), t...)
	head = appendTag(head, tagEventObject, ext)
	head = appendTag(head, tagRawExtRaw, env)
	head = appendEnvelopeHead(head, tm, len(raw))
	_, _ = bw.Write(head)
	_, _ = bw.Write(raw)
	_, _ = bw.Write(envelopeTail)
}
