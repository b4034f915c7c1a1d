package apiserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/scheme"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// serveResource authenticates and authorizes a resource request, then hands
// it to the verb's handler.
func (s *Server) serveResource(w http.ResponseWriter, r *http.Request, ri *requestInfo) {
	start := time.Now()
	rec := &recorder{ResponseWriter: w}
	kind := inflightKind(ri.Verb)
	s.metrics.inflight.WithLabelValues(kind).Inc()
	// The metrics name what is served only: a request counts under its
	// resource once the path names a served one, under its subresource
	// once that is served too; until then under empty labels, so no
	// caller adds series by typing paths.
	served := requestInfo{Verb: ri.Verb}
	defer func() {
		s.metrics.inflight.WithLabelValues(kind).Dec()
		s.metrics.observe(&served, rec.code, start)
	}()
	w = rec

	if (schema.GroupVersion{Group: ri.Group, Version: ri.Version}) == metricsGV {
		if metricsResources[ri.Resource] {
			served.Group, served.Resource = ri.Group, ri.Resource
		}
		s.serveResourceMetrics(w, r, ri)
		return
	}
	res := s.resources[schema.GroupVersionResource{Group: ri.Group, Version: ri.Version, Resource: ri.Resource}]
	if res == nil {
		writeError(w, notFoundPath(r.URL.Path))
		return
	}
	served.Group, served.Resource = res.gvr.Group, res.gvr.Resource
	if !res.namespaced {
		if ri.Resource == "namespaces" {
			ri.Namespace = ""
		} else if ri.Namespace != "" {
			writeError(w, notFoundPath(r.URL.Path))
			return
		}
	}
	if ri.Subresource != "" && !contains(res.subresources(), ri.Subresource) {
		writeError(w, notFoundPath(r.URL.Path))
		return
	}
	served.Subresource = ri.Subresource
	connect := ri.Subresource != "" && contains(res.connect, ri.Subresource)
	if ri.Subresource != "" && (ri.Verb == "list" || ri.Verb == "watch" || (ri.Verb == "delete" && !connect)) {
		writeError(w, apierrors.NewMethodNotSupported(res.gvr.GroupResource(), ri.Verb))
		return
	}
	user, ok := userFrom(r.Context()) // authenticate put it there
	if !ok {
		writeError(w, apierrors.NewUnauthorized("Unauthorized"))
		return
	}
	attrs := Attributes{User: user, Verb: ri.Verb, APIGroup: ri.Group, Resource: ri.Resource, Subresource: ri.Subresource, Namespace: ri.Namespace, Name: ri.Name}
	if ri.Verb == "list" || ri.Verb == "watch" {
		attrs.FieldSelector = r.URL.Query().Get("fieldSelector")
	}
	if err := s.chain.Authz.Authorize(r.Context(), attrs); err != nil {
		writeError(w, apierrors.NewForbidden(res.gvr.GroupResource(), ri.Name, err))
		return
	}
	req := &request{s: s, w: w, r: r, ri: ri, res: res, user: user, start: start}
	var err error
	if !connect {
		req.dryRun, err = dryRunParam(r.URL.Query(), ri.Verb)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	if connect {
		err = req.connect()
	} else {
		err = req.serveVerb()
	}
	if err != nil {
		writeError(w, err)
	}
}

// serveVerb serves a request to the resource itself or a stored
// subresource.
func (q *request) serveVerb() error {
	var err error
	switch q.ri.Verb {
	case "get":
		err = q.get()
	case "list":
		err = q.list()
	case "watch":
		err = q.watch()
	case "create":
		err = q.create()
	case "update":
		err = q.update()
	case "patch":
		err = q.patch()
	case "delete":
		err = q.delete()
	case "deletecollection":
		err = q.deleteCollection()
	}
	return err
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// request is one resource request being served.
type request struct {
	s    *Server
	w    http.ResponseWriter
	r    *http.Request
	ri   *requestInfo
	res  *resource
	user User
	// start is when the request arrived: step ①'s "received".
	start time.Time
	// applying: a server-side apply, whose managed fields the apply
	// computes (mutate does not track them again).
	applying bool
	// dryRun is the request's dryRun, validated (every value "All"): from
	// the query of a write, or, when the query has none, from a delete's
	// DeleteOptions or an eviction's deleteOptions (deleteOptions, evict).
	// Non-empty: admitted and answered, nothing written.
	dryRun []string
}

func (q *request) ctx() context.Context { return q.r.Context() }

func (q *request) gr() schema.GroupResource { return q.res.gvr.GroupResource() }

// dry: the request is a dry run.
func (q *request) dry() bool { return len(q.dryRun) > 0 }

// dryRunOptions names the options type whose dryRun a verb's query sets,
// as upstream's errors name it; verbs that write nothing have none.
var dryRunOptions = map[string]string{"create": "CreateOptions", "update": "UpdateOptions", "patch": "PatchOptions",
	"delete": "DeleteOptions", "deletecollection": "DeleteOptions"}

// dryRunParam reads a write's dryRun query parameter: values other than
// All are a 422, as upstream's options validation.
func dryRunParam(query url.Values, verb string) ([]string, error) {
	kind, ok := dryRunOptions[verb]
	if !ok {
		return nil, nil
	}
	values := query["dryRun"]
	return values, validDryRun(kind, values)
}

// validDryRun refuses dryRun values other than All (upstream's
// ValidateDryRun), quoting at most an excerpt of them.
func validDryRun(kind string, values []string) error {
	errs := metavalidation.ValidateDryRun(field.NewPath("dryRun"), values)
	if len(errs) == 0 {
		return nil
	}
	for _, e := range errs {
		e.BadValue = excerpt(fmt.Sprint(e.BadValue), maxQuotedRun)
	}
	return newInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
}

// readBody reads the request body, refusing it with 413 past the limit
// before anything is decoded or written.
func (q *request) readBody() ([]byte, error) { return q.s.readBody(q.w, q.r) }

// readBody reads r's body to its end, at most MaxRequestBytes (413 past
// it) within BodyReadTimeout (400 after it): every handler that answers a
// request with a body reads it so first, since over HTTP/2 an answer sent
// before the body's end resets the client's stream.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	limit := s.opts.MaxRequestBytes
	if r.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(s.opts.BodyReadTimeout))
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err == nil {
		_ = rc.SetReadDeadline(time.Time{})
	} else {
		// The deadline stays past and the connection closes after the
		// answer: net/http would otherwise wait for the rest of a stalled
		// body before answering.
		w.Header().Set("Connection", "close")
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge(limit)
		}
		return nil, badRequest("reading the request body: %v", err)
	}
	return b, nil
}

const protobufType = "application/vnd.kubernetes.protobuf"

// body returns the request body and its media type. JSON and YAML come back
// as JSON; protobuf (client-go's typed clients send it by default) comes back
// as is. Media types outside allowed are 415.
func (q *request) body(allowed ...string) ([]byte, string, error) {
	ct := q.r.Header.Get("Content-Type")
	mt := strings.TrimSpace(strings.SplitN(ct, ";", 2)[0])
	if mt == "" {
		mt = "application/json"
	}
	if len(allowed) == 0 {
		allowed = []string{"application/json", "application/yaml", protobufType}
	}
	if !contains(allowed, mt) {
		return nil, mt, unsupportedMediaType(ct)
	}
	body, err := q.readBody()
	if err != nil {
		return nil, mt, err
	}
	switch mt {
	case "application/yaml", "application/apply-patch+yaml":
		// The strict reading names duplicate keys, as JSON bodies'
		// duplicates are named; what it refuses is read again leniently,
		// whose JSON keeps the last of duplicate keys. (What the strict
		// reading accepts, the lenient one reads alike: it was read twice,
		// 0.3 s each for a ConfigMap of 110,000 keys.)
		j, strictErr := yaml.YAMLToJSONStrict(body)
		if strictErr != nil {
			var err error
			if j, err = yaml.YAMLToJSON(body); err != nil {
				return nil, mt, badRequest("the body could not be decoded as YAML: %v", err)
			}
			if err := q.fieldProblems(yamlProblems(strictErr)); err != nil {
				return nil, mt, err
			}
		}
		body = j
	case jsonPatchType, mergePatchType, strategicPatchType:
		// A patch's duplicate keys are lost in the patched object: name
		// them here. (Decoding a body into its object names a create's or
		// update's own.)
		if mode, err := q.fieldValidation(); err == nil && mode != "Ignore" {
			var doc any
			if dups, err := sigsjson.UnmarshalStrict(body, &doc, sigsjson.DisallowDuplicateFields); err == nil && len(dups) > 0 {
				msgs := make([]string, len(dups))
				for i, e := range dups {
					msgs[i] = e.Error()
				}
				if err := q.fieldProblems(msgs); err != nil {
					return nil, mt, err
				}
			}
		}
	}
	return body, mt, nil
}

// yamlProblems are the per-line complaints of a strict YAML reading
// ("line 4: key \"replicas\" already set in map").
func yamlProblems(err error) []string {
	var out []string
	for _, line := range strings.Split(err.Error(), "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "line ") {
			out = append(out, "yaml: "+line)
		}
	}
	if len(out) == 0 {
		out = []string{err.Error()}
	}
	return out
}

// protobufCodec decodes the protobuf envelope ("k8s\x00" + runtime.Unknown)
// of the k8s.io/api types.
var protobufCodec = protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)

// decodeBody decodes a body of media type mt into obj. For JSON it honours
// fieldValidation: Strict turns unknown and duplicate fields into a 400,
// Warn (the default) into warnings.
func (q *request) decodeBody(data []byte, mt string, obj runtime.Object, gvk schema.GroupVersionKind) error {
	if mt == protobufType {
		if _, _, err := protobufCodec.Decode(data, nil, obj); err != nil {
			return badRequest("the protobuf body could not be decoded: %v", err)
		}
		return checkKind(obj, gvk)
	}
	return q.decodeInto(data, obj, gvk)
}

// decodeInto decodes JSON into obj, honouring fieldValidation.
func (q *request) decodeInto(data []byte, obj runtime.Object, gvk schema.GroupVersionKind) error {
	if _, err := q.fieldValidation(); err != nil {
		return err
	}
	strictErrs, err := sigsjson.UnmarshalStrict(data, obj, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
	if err != nil {
		return badRequest("the object provided is unrecognized or malformed: %v", err)
	}
	if len(strictErrs) > 0 {
		msgs := make([]string, len(strictErrs))
		for i, e := range strictErrs {
			msgs[i] = e.Error()
		}
		if err := q.fieldProblems(msgs); err != nil {
			return err
		}
	}
	return checkKind(obj, gvk)
}

// fieldValidation is the request's directive: Strict, Warn ("" too: the
// default) or Ignore.
func (q *request) fieldValidation() (string, error) {
	mode := q.r.URL.Query().Get("fieldValidation")
	switch mode {
	case "", "Warn", "Strict", "Ignore":
		return mode, nil
	}
	return "", badRequest("fieldValidation must be one of Ignore, Warn, Strict; got %q", mode)
}

// fieldProblems answers unknown or duplicate fields as fieldValidation
// says: a 400 under Strict, Warning headers under Warn (at most maxCauses,
// each an excerpt: they quote the body), nothing under Ignore.
func (q *request) fieldProblems(msgs []string) error {
	mode, err := q.fieldValidation()
	if err != nil || len(msgs) == 0 || mode == "Ignore" {
		return err
	}
	if mode == "Strict" {
		return badRequest("strict decoding error: %s", strings.Join(msgs, ", "))
	}
	for i, m := range msgs {
		if i == maxCauses {
			m = fmt.Sprintf("and %d more unknown or duplicate fields", len(msgs)-i)
		}
		m = excerpt(m, maxQuotedRun)
		q.w.Header().Add("Warning", `299 - "`+strings.ReplaceAll(m, `"`, `\"`)+`"`)
		if i == maxCauses {
			break
		}
	}
	return nil
}

// checkKind refuses a body whose apiVersion/kind is not the endpoint's and
// stamps the endpoint's on one that has none.
func checkKind(obj runtime.Object, gvk schema.GroupVersionKind) error {
	tm := obj.GetObjectKind().GroupVersionKind()
	if tm.Kind != "" && tm.Kind != gvk.Kind {
		return badRequest("the kind of the object (%s) does not match the endpoint (%s)", tm.Kind, gvk.Kind)
	}
	if av := tm.GroupVersion().String(); tm.Version != "" && av != gvk.GroupVersion().String() {
		return badRequest("the API version of the object (%s) does not match the endpoint (%s)", av, gvk.GroupVersion())
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return nil
}

// decodeObject reads the body as an object of the request's resource and
// checks its name and namespace against the URL.
func (q *request) decodeObject() (runtime.Object, error) {
	data, mt, err := q.body()
	if err != nil {
		return nil, err
	}
	obj := q.res.newObj()
	if err := q.decodeBody(data, mt, obj, q.res.gvk()); err != nil {
		return nil, err
	}
	if err := q.checkNames(objectMeta(obj)); err != nil {
		return nil, err
	}
	return obj, nil
}

func (q *request) checkNames(m *metav1.ObjectMeta) error {
	if q.res.namespaced {
		switch {
		case m.Namespace == "":
			m.Namespace = q.ri.Namespace
		case q.ri.Namespace != "" && m.Namespace != q.ri.Namespace:
			return badRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
	}
	if q.ri.Name != "" {
		if m.Name == "" {
			m.Name = q.ri.Name
		} else if m.Name != q.ri.Name {
			return badRequest("the name of the object (%s) does not match the name on the URL (%s)", m.Name, q.ri.Name)
		}
	}
	return nil
}
