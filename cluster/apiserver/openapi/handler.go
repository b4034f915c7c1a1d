package openapi

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Media types of the documents, as upstream kube-openapi serves them.
// Clients ask for the "@v1.0" spelling (client-go's discovery sends
// "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"); responses
// carry the ".v1.0" spelling.
const (
	contentTypeJSON    = "application/json"
	protoV2Deprecated  = "com.github.proto-openapi.spec.v2@v1.0+protobuf"
	protoV2            = "com.github.proto-openapi.spec.v2.v1.0+protobuf"
	protoV3Deprecated  = "com.github.proto-openapi.spec.v3@v1.0+protobuf"
	protoV3            = "com.github.proto-openapi.spec.v3.v1.0+protobuf"
	gzipMinSize        = 1024
	cacheControlNo     = "no-cache, private"
	cacheControlHashed = "public, immutable"
)

type offer struct {
	subtype     string // of "application/..."
	proto       bool
	contentType string
}

var (
	v2Offers = []offer{
		{"json", false, contentTypeJSON},
		{protoV2Deprecated, true, "application/" + protoV2},
		{protoV2, true, "application/" + protoV2},
	}
	v3Offers = []offer{
		{"json", false, contentTypeJSON},
		{protoV3Deprecated, true, "application/" + protoV3},
		{protoV3, true, "application/" + protoV3},
	}
	indexOffers = []offer{{"json", false, contentTypeJSON}}
)

// ServeHTTP serves /openapi/v2, /openapi/v3 and /openapi/v3/<path>, where
// <path> is a key of the v3 index ("api/v1", "apis/apps/v1", "apis/apps",
// "api", "apis"). Other paths get 404; methods other than GET and HEAD 405.
//
// Like upstream: responses carry a quoted ETag (the SHA-512 of the JSON,
// the same for every encoding) and honour If-None-Match; a v3 document
// requested with the index's ?hash= is served "Cache-Control: public,
// immutable", and with a stale hash redirects (301) to the current URL;
// everything else is "Cache-Control: no-cache, private". Bodies are gzipped
// when the client accepts it.
func (s *Spec) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	switch {
	case p == "/openapi/v2":
		s.serve(w, r, s.v2, v2Offers, false)
	case p == "/openapi/v3" || p == "/openapi/v3/":
		s.serve(w, r, s.v3Index, indexOffers, false)
	case strings.HasPrefix(p, "/openapi/v3/"):
		key := strings.TrimSuffix(strings.TrimPrefix(p, "/openapi/v3/"), "/")
		doc, ok := s.v3Docs[key]
		if !ok {
			http.NotFound(w, r)
			return
		}
		hashed := false
		if h := r.URL.Query().Get("hash"); h != "" {
			if h != doc.hash {
				w.Header().Set("Cache-Control", cacheControlNo)
				http.Redirect(w, r, v3URL(key, doc.hash), http.StatusMovedPermanently)
				return
			}
			hashed = true
		}
		s.serve(w, r, doc, v3Offers, hashed)
	default:
		http.NotFound(w, r)
	}
}

func (s *Spec) serve(w http.ResponseWriter, r *http.Request, b *blob, offers []offer, hashed bool) {
	h := w.Header()
	h.Add("Vary", "Accept")
	h.Add("Vary", "Accept-Encoding")
	o, ok := negotiate(r.Header.Get("Accept"), offers)
	if !ok {
		http.Error(w, "none of the Accept media types is served here; use "+offerList(offers), http.StatusNotAcceptable)
		return
	}
	etag := strconv.Quote(b.hash)
	h.Set("Etag", etag)
	h.Set("Last-Modified", s.modified.Format(http.TimeFormat))
	if hashed {
		h.Set("Cache-Control", cacheControlHashed)
		h.Set("Expires", time.Now().AddDate(1, 0, 0).UTC().Format(http.TimeFormat))
	} else {
		h.Set("Cache-Control", cacheControlNo)
	}
	if notModified(r, etag, s.modified) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body, gz, err := b.body(o.proto, acceptsGzip(r.Header.Get("Accept-Encoding")))
	if err != nil {
		h.Del("Etag")
		h.Del("Last-Modified")
		h.Set("Cache-Control", cacheControlNo)
		http.Error(w, "openapi: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h.Set("Content-Type", o.contentType)
	if gz {
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// body returns the encoded document, gzipped when asked and worth it. The
// protobuf and gzip forms are built on first use and kept.
func (b *blob) body(wantProto, wantGzip bool) (data []byte, gzipped bool, err error) {
	data = b.json
	if wantProto {
		if data, err = b.protobuf(); err != nil {
			return nil, false, err
		}
	}
	if !wantGzip || len(data) < gzipMinSize {
		return data, false, nil
	}
	if wantProto {
		b.gzPOnce.Do(func() { b.gzProto = gzipBytes(data) })
		return b.gzProto, true, nil
	}
	b.gzOnce.Do(func() { b.gzJSON = gzipBytes(data) })
	return b.gzJSON, true, nil
}

func (b *blob) protobuf() ([]byte, error) {
	b.protoOnce.Do(func() {
		if b.toProto == nil {
			b.protoErr = errNoProto
			return
		}
		b.proto, b.protoErr = b.toProto(b.json)
	})
	return b.proto, b.protoErr
}

type constError string

func (e constError) Error() string { return string(e) }

const errNoProto = constError("no protobuf form of this document")

func gzipBytes(data []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	_, _ = zw.Write(data)
	_ = zw.Close()
	return buf.Bytes()
}

// notModified implements If-None-Match (and If-Modified-Since when there
// is no If-None-Match), as http.ServeContent does.
func notModified(r *http.Request, etag string, modified time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		for _, t := range strings.Split(inm, ",") {
			t = strings.TrimSpace(t)
			t = strings.TrimPrefix(t, "W/")
			if t == "*" || t == etag {
				return true
			}
		}
		return false
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" {
		if t, err := http.ParseTime(ims); err == nil && !modified.After(t) {
			return true
		}
	}
	return false
}

func acceptsGzip(ae string) bool {
	for _, part := range strings.Split(ae, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(strings.ToLower(coding)) != "gzip" {
			continue
		}
		return qValue(params) > 0
	}
	return false
}

type acceptClause struct {
	typ, sub string
	q        float64
}

// negotiate picks the offer for the highest-q, most specific Accept clause
// that matches one (an empty Accept means */*).
func negotiate(accept string, offers []offer) (offer, bool) {
	if strings.TrimSpace(accept) == "" {
		accept = "*/*"
	}
	var clauses []acceptClause
	for _, part := range strings.Split(accept, ",") {
		mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
		if mt == "" {
			continue
		}
		if mt == "*" {
			mt = "*/*"
		}
		typ, sub, ok := strings.Cut(mt, "/")
		if !ok {
			continue
		}
		q := qValue(params)
		if q <= 0 {
			continue
		}
		clauses = append(clauses, acceptClause{typ, sub, q})
	}
	sort.SliceStable(clauses, func(i, j int) bool {
		if clauses[i].q != clauses[j].q {
			return clauses[i].q > clauses[j].q
		}
		return specificity(clauses[i]) > specificity(clauses[j])
	})
	for _, c := range clauses {
		if c.typ != "application" && c.typ != "*" {
			continue
		}
		for _, o := range offers {
			if c.sub == "*" || c.sub == strings.ToLower(o.subtype) {
				return o, true
			}
		}
	}
	return offer{}, false
}

func specificity(c acceptClause) int {
	switch {
	case c.typ == "*":
		return 0
	case c.sub == "*":
		return 1
	}
	return 2
}

// qValue returns the q parameter of a media range's parameters (1 if
// absent or malformed).
func qValue(params string) float64 {
	for _, p := range strings.Split(params, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || strings.TrimSpace(strings.ToLower(k)) != "q" {
			continue
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return 1
		}
		return q
	}
	return 1
}

func offerList(offers []offer) string {
	seen := map[string]bool{}
	var out []string
	for _, o := range offers {
		mt := "application/" + o.subtype
		if !seen[mt] {
			seen[mt] = true
			out = append(out, mt)
		}
	}
	return strings.Join(out, ", ")
}
