package apiserver

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/kstep-dev/kstep/cluster/apiserver/printers"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// output is the representation a client asked for with Accept.
type output int

const (
	outJSON output = iota
	outYAML
	outTable
	// outProtobuf is the k8s.io/api types' protobuf (protobuf.go), which
	// client-go's typed clients ask for first: decoding it costs them a
	// fraction of what JSON does.
	outProtobuf
)

// negotiate reads Accept the way upstream does for the subset we serve:
// the first acceptable media type wins; Table only for meta.k8s.io;
// protobuf only when proto says the answer's type has a protobuf encoding
// (otherwise, as upstream for such types, the next acceptable type wins).
func negotiate(r *http.Request, proto bool) (output, bool) {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return outJSON, true
	}
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "application/json", "*/*", "application/*":
			if params["as"] == "Table" {
				if params["g"] == "meta.k8s.io" && (params["v"] == "v1" || params["v"] == "v1beta1") {
					return outTable, true
				}
				continue
			}
			if params["as"] != "" {
				continue // PartialObjectMetadata and others: not served; fall through
			}
			return outJSON, true
		case "application/yaml":
			return outYAML, true
		case protobufType:
			if params["as"] != "" || !proto {
				continue // protobuf Tables and metadata: not served
			}
			return outProtobuf, true
		}
	}
	return outJSON, false
}

func notAcceptable(w http.ResponseWriter) {
	writeStatus(w, &metav1.Status{Code: http.StatusNotAcceptable, Reason: metav1.StatusReasonNotAcceptable,
		Message: "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/json;as=Table;v=v1;g=meta.k8s.io"})
}

// writeBytes writes a JSON body, converting to YAML when asked (never
// protobuf: its bodies are written by writeProtobuf).
func writeBytes(w http.ResponseWriter, code int, out output, body []byte) {
	if out == outYAML {
		y, err := yaml.JSONToYAML(body)
		if err != nil {
			writeError(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/yaml")
		w.WriteHeader(code)
		_, _ = w.Write(y)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// writeObject writes one object in the representation asked for.
func (s *Server) writeObject(w http.ResponseWriter, r *http.Request, code int, res *resource, obj runtime.Object) {
	_, proto := obj.(protoMessage)
	out, ok := negotiate(r, proto)
	if !ok {
		notAcceptable(w)
		return
	}
	switch out {
	case outTable:
		s.writeTable(w, r, code, res, []runtime.Object{obj}, objectMeta(obj).ResourceVersion, "")
		return
	case outProtobuf:
		b, err := encodeObjectProto(obj, res)
		if err != nil {
			writeError(w, err)
			return
		}
		writeProtobuf(w, code, b)
		return
	}
	b, err := json.Marshal(obj)
	if err != nil {
		writeError(w, err)
		return
	}
	writeBytes(w, code, out, b)
}

// writeTable renders objs as a meta.k8s.io/v1 Table.
func (s *Server) writeTable(w http.ResponseWriter, r *http.Request, code int, res *resource, objs []runtime.Object, rv, cont string) {
	t, err := tableFor(r, res, objs, s.now())
	if err != nil {
		writeError(w, err)
		return
	}
	t.ResourceVersion, t.Continue = rv, cont
	b, err := json.Marshal(t)
	if err != nil {
		writeError(w, err)
		return
	}
	writeBytes(w, code, outJSON, b)
}

func tableFor(r *http.Request, res *resource, objs []runtime.Object, now time.Time) (*metav1.Table, error) {
	t, err := printers.Table(res.gvr.GroupResource(), objs, now, r.URL.Query().Get("noHeaders") == "true")
	if err != nil {
		return nil, err
	}
	t.Kind, t.APIVersion = "Table", "meta.k8s.io/v1"
	include := metav1.IncludeObjectPolicy(r.URL.Query().Get("includeObject"))
	for i := range t.Rows {
		if i >= len(objs) {
			break
		}
		switch include {
		case metav1.IncludeNone:
		case metav1.IncludeObject:
			t.Rows[i].Object = runtime.RawExtension{Object: objs[i]}
		default:
			m := objectMeta(objs[i])
			t.Rows[i].Object = runtime.RawExtension{Object: &metav1.PartialObjectMetadata{
				TypeMeta:   metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"},
				ObjectMeta: *m,
			}}
		}
	}
	return t, nil
}

// writeList writes a list whose items are already encoded (as JSON objects,
// or for outProtobuf as their bare protobuf messages), the fast path for
// lists served from the watch cache.
func writeList(w http.ResponseWriter, out output, res *resource, items [][]byte, rv, cont string, remaining *int64) {
	if out == outProtobuf {
		body, err := encodeListProto(res, items, rv, cont, remaining)
		if err != nil {
			writeError(w, err)
			return
		}
		writeProtobuf(w, http.StatusOK, body)
		return
	}
	var b bytes.Buffer
	b.Grow(128 + 1024*len(items))
	b.WriteString(`{"kind":"`)
	b.WriteString(res.kind)
	b.WriteString(`List","apiVersion":"`)
	b.WriteString(res.gvr.GroupVersion().String())
	b.WriteString(`","metadata":`)
	meta, _ := json.Marshal(metav1.ListMeta{ResourceVersion: rv, Continue: cont, RemainingItemCount: remaining})
	b.Write(meta)
	b.WriteString(`,"items":[`)
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteString("]}\n")
	writeBytes(w, http.StatusOK, out, b.Bytes())
}
