package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/kstep-dev/kstep/cluster/storage"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	sigsjson "sigs.k8s.io/json"
)

// Objects are stored in etcd with their apiVersion and kind and WITHOUT a
// resourceVersion: the resourceVersion is the key's mod revision, set on
// every read. They are stored as protobuf (the "k8s\x00" envelope), as
// upstream stores them, unless Options.StorageMediaType asks for JSON
// (readable with etcdctl): every apiserver decodes each write its watch
// caches receive, and protobuf decodes several times faster than JSON (
// BenchmarkStoredCodec) and takes less room in etcd. A value is read in
// either form whatever the option, so a cluster can switch.

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

func corev1TypeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: corev1.SchemeGroupVersion.String(), Kind: kind}
}

func eventsv1TypeMeta() metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: eventsv1.SchemeGroupVersion.String(), Kind: "Event"}
}

// setTypeMeta stamps obj with the resource's apiVersion and kind.
func (r *resource) setTypeMeta(obj runtime.Object) {
	obj.GetObjectKind().SetGroupVersionKind(r.gvk())
}

// encodeStored renders obj for etcd: resourceVersion cleared.
func encodeStored(r *resource, obj runtime.Object) ([]byte, error) {
	m := objectMeta(obj)
	rv := m.ResourceVersion
	m.ResourceVersion = ""
	r.setTypeMeta(obj)
	var b []byte
	var err error
	if r.storeProtobuf {
		b, err = encodeObjectProto(obj, r) // the envelope the wire uses too
	} else {
		b, err = json.Marshal(obj)
	}
	m.ResourceVersion = rv
	if err != nil {
		return nil, fmt.Errorf("encode %s %s/%s: %w", r.kind, m.Namespace, m.Name, err)
	}
	return b, nil
}

// decodeStored turns an etcd value, protobuf or JSON, into an object at
// revision rev.
func decodeStored(r *resource, value []byte, rev int64) (runtime.Object, error) {
	obj := r.newObj()
	if bytes.HasPrefix(value, protoMagic) { // a JSON value opens with '{'

		if _, _, err := protobufCodec.Decode(value, nil, obj); err != nil {
			return nil, fmt.Errorf("decode stored %s: %w", r.kind, err)
		}
	} else if err := sigsjson.UnmarshalCaseSensitivePreserveInts(value, obj); err != nil {
		return nil, fmt.Errorf("decode stored %s: %w", r.kind, err)
	}
	r.setTypeMeta(obj)
	objectMeta(obj).ResourceVersion = itoa(rev)
	return obj, nil
}

// storesProtobuf reports whether r's objects can be stored as protobuf: the
// generated marshalling every k8s.io/api type has.
func storesProtobuf(r *resource) bool {
	_, ok := r.newObj().(protoMessage)
	return ok
}

// cacheCodec is the storage.Codec of one resource's watch cache.
type cacheCodec struct{ r *resource }

var _ storage.Codec = cacheCodec{}

func (c cacheCodec) Decode(_ string, value []byte, rev int64) (runtime.Object, error) {
	return decodeStored(c.r, value, rev)
}

// DecodeProtobuf turns a bare message EncodeProtobuf made back into the
// object, at revision rev.
func (c cacheCodec) DecodeProtobuf(msg []byte, rev int64) (runtime.Object, error) {
	obj := c.r.newObj()
	m, ok := obj.(interface{ Unmarshal([]byte) error })
	if !ok {
		return nil, fmt.Errorf("%T has no protobuf encoding", obj)
	}
	if err := m.Unmarshal(msg); err != nil {
		return nil, fmt.Errorf("decode %s: %w", c.r.kind, err)
	}
	c.r.setTypeMeta(obj)
	objectMeta(obj).ResourceVersion = itoa(rev)
	return obj, nil
}

func (c cacheCodec) Encode(obj runtime.Object) ([]byte, error) { return json.Marshal(obj) }

// EncodeProtobuf is the object's bare message; the watch cache asks only
// for a protobuf client, and only for resources with a protobuf encoding.
func (c cacheCodec) EncodeProtobuf(obj runtime.Object) ([]byte, error) { return marshalProto(obj) }

func (c cacheCodec) Bookmark(rev int64, initialEventsEnd bool) runtime.Object {
	obj := c.r.newObj()
	c.r.setTypeMeta(obj)
	m := objectMeta(obj)
	m.ResourceVersion = itoa(rev)
	if initialEventsEnd {
		m.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	}
	return obj
}

func (c cacheCodec) Attrs(obj runtime.Object) storage.Attrs {
	return attrsOf(c.r, obj)
}

// attrsOf computes what label and field selectors match against.
func attrsOf(r *resource, obj runtime.Object) storage.Attrs {
	m := objectMeta(obj)
	var f fields.Set
	if r.fields != nil {
		f = r.fields(obj) // a new map each call: completed here
	} else {
		f = make(fields.Set, 2)
	}
	f["metadata.name"] = m.Name
	if r.namespaced {
		f["metadata.namespace"] = m.Namespace
	}
	return storage.Attrs{Namespace: m.Namespace, Labels: storage.PairsOf(m.Labels), Fields: storage.PairsOf(f)}
}

// selectableFields lists the field selector keys a resource supports; any
// other key is a 400, as upstream.
func (r *resource) selectableFields() map[string]bool {
	out := map[string]bool{"metadata.name": true}
	if r.namespaced {
		out["metadata.namespace"] = true
	}
	if r.fields != nil {
		for k := range r.fields(r.newObj()) {
			out[k] = true
		}
	}
	return out
}
