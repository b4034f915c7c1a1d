package apiserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
	"k8s.io/apimachinery/pkg/util/proxy"
	apiproxy "k8s.io/apiserver/pkg/util/proxy"
)

// The connect subresources, proxied to a node's kubelet with the
// apiserver's kubelet client (kubelet.go), as upstream's pod and node
// registries do (pkg/registry/core/pod/rest/subresources.go):
//
//   - pods/log (GET): the kubelet's /containerLogs, its options checked
//     here (PodLogOptions) and streamed back;
//   - pods/exec, pods/attach (GET or POST): SPDY upgrades passed through to
//     the kubelet's /exec and /attach; WebSocket requests of the v5
//     stream-close protocol are translated to SPDY toward the kubelet
//     (apiserver's StreamTranslatorHandler);
//   - pods/portforward (GET or POST): SPDY passed through to
//     /portForward; WebSocket tunneling of SPDY (TunnelingHandler);
//   - nodes/proxy (any method): /api/v1/nodes/{name}/proxy/{path} to
//     the kubelet's {path}.
//
// RBAC sees pods/log as get, exec/attach/portforward as create for POST
// and, for GET upgrades, get and then create too (upstream's
// AuthorizePodWebsocketUpgradeCreatePermission), nodes/proxy by method,
// and as create too for an upgrade or the kubelet's exec, attach,
// portForward and run.
// The user's own credentials (bearer token, impersonation headers) never
// reach the kubelet: it sees the apiserver's certificate.

// connect serves a connect subresource, authorized for its verb.
func (q *request) connect() error {
	switch q.res.gvr.Resource + "/" + q.ri.Subresource {
	case "pods/log":
		return q.podLog()
	case "pods/exec", "pods/attach", "pods/portforward":
		return q.podStream()
	case "nodes/proxy":
		return q.nodeProxy()
	}
	return notFoundPath(q.r.URL.Path)
}

func (q *request) subGR() schema.GroupResource {
	return schema.GroupResource{Group: q.res.gvr.Group, Resource: q.res.gvr.Resource + "/" + q.ri.Subresource}
}

// connectPod is the pod from the watch cache, or from etcd when the cache
// does not hold it or holds it unbound yet (it may lag a binding).
func (q *request) connectPod() (*corev1.Pod, error) {
	if e, ok := q.s.cacher(q.res).Get(q.res.key(q.ri.Namespace, q.ri.Name)); ok {
		if p := e.Object().(*corev1.Pod); p.Spec.NodeName != "" {
			return p, nil
		}
	}
	obj, err := q.read(q.ctx(), q.ri.Namespace, q.ri.Name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Pod), nil
}

// podNode is the node a pod is bound to; a pod not yet bound is a 400, as
// upstream.
func podNode(p *corev1.Pod) (string, error) {
	if p.Spec.NodeName == "" {
		return "", apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", p.Name))
	}
	return p.Spec.NodeName, nil
}

// chooseContainer is the container a log or stream request is for: the
// one named (any of the pod's containers, init and ephemeral ones too),
// or the pod's only container. A pod of several needs a name: the 400
// lists them, as upstream's.
func chooseContainer(p *corev1.Pod, name string) (string, error) {
	var all []string
	for _, c := range p.Spec.InitContainers {
		all = append(all, c.Name)
	}
	for _, c := range p.Spec.Containers {
		all = append(all, c.Name)
	}
	for _, c := range p.Spec.EphemeralContainers {
		all = append(all, c.Name)
	}
	if name != "" {
		if !contains(all, name) {
			return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", name, p.Name))
		}
		return name, nil
	}
	switch len(p.Spec.Containers) {
	case 0:
		return "", apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a container", p.Name))
	case 1:
		return p.Spec.Containers[0].Name, nil
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: [%s]", p.Name, strings.Join(all, " ")))
}

// proxiedRequest is the request as the kubelet gets it: without the
// user's credentials.
func (q *request) proxiedRequest() *http.Request {
	r := q.r.Clone(q.ctx())
	r.Header.Del("Authorization")
	for k := range r.Header {
		if strings.HasPrefix(k, "Impersonate-") {
			r.Header.Del(k)
		}
	}
	return r
}

// proxyResponder answers a proxy's failure (dialing the kubelet, an
// upgrade refused) as a Status.
type proxyResponder struct{}

func (proxyResponder) Error(w http.ResponseWriter, _ *http.Request, err error) {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		writeError(w, err)
		return
	}
	writeStatus(w, &metav1.Status{Code: http.StatusInternalServerError, Reason: metav1.StatusReasonInternalError, Message: err.Error()})
}

// maxKubeletErrorBytes bounds what of a kubelet's refusal is read and
// quoted.
const maxKubeletErrorBytes = 16 << 10

// kubeletRefusal turns a kubelet's non-2xx answer into a Status with its
// code and message (its own Status when it sent one).
func kubeletRefusal(resp *http.Response, gr schema.GroupResource, name string) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxKubeletErrorBytes))
	var st metav1.Status
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" && st.Code == int32(resp.StatusCode) {
		return &apierrors.StatusError{ErrStatus: st}
	}
	msg := strings.TrimSpace(string(body))
	if msg == "" {
		msg = fmt.Sprintf("the kubelet answered %s", resp.Status)
	}
	reason := metav1.StatusReasonUnknown
	switch resp.StatusCode {
	case http.StatusBadRequest:
		reason = metav1.StatusReasonBadRequest
	case http.StatusUnauthorized:
		reason = metav1.StatusReasonUnauthorized
	case http.StatusForbidden:
		reason = metav1.StatusReasonForbidden
	case http.StatusNotFound:
		reason = metav1.StatusReasonNotFound
	case http.StatusServiceUnavailable:
		reason = metav1.StatusReasonServiceUnavailable
	}
	if resp.StatusCode >= 500 && reason == metav1.StatusReasonUnknown {
		reason = metav1.StatusReasonInternalError
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: int32(resp.StatusCode), Reason: reason, Message: msg,
		Details: &metav1.StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: name}}}
}

// podLogOptions are upstream's corev1.PodLogOptions as a query carries
// them, checked as upstream's ValidatePodLogOptions does.
func parsePodLogOptions(query url.Values, pod string) (*corev1.PodLogOptions, error) {
	o := &corev1.PodLogOptions{Container: query.Get("container")}
	var errs []string
	boolean := func(k string, dst *bool) {
		if v := query.Get(k); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: %q is not a boolean", k, v))
			}
			*dst = b
		}
	}
	integer := func(k string) *int64 {
		v := query.Get(k)
		if v == "" {
			return nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %q is not an integer", k, v))
			return nil
		}
		return &n
	}
	boolean("follow", &o.Follow)
	boolean("previous", &o.Previous)
	boolean("timestamps", &o.Timestamps)
	boolean("insecureSkipTLSVerifyBackend", &o.InsecureSkipTLSVerifyBackend)
	o.SinceSeconds, o.TailLines, o.LimitBytes = integer("sinceSeconds"), integer("tailLines"), integer("limitBytes")
	if v := query.Get("sinceTime"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			errs = append(errs, fmt.Sprintf("sinceTime: %q is not an RFC 3339 time", v))
		} else {
			mt := metav1.NewTime(t)
			o.SinceTime = &mt
		}
	}
	if len(errs) > 0 {
		return nil, apierrors.NewBadRequest("the pod log options could not be decoded: " + strings.Join(errs, "; "))
	}
	// ValidatePodLogOptions: a 422 naming the fields.
	var invalid []string
	if o.TailLines != nil && *o.TailLines < 0 {
		invalid = append(invalid, fmt.Sprintf("tailLines: Invalid value: %d: must be greater than or equal to 0", *o.TailLines))
	}
	if o.LimitBytes != nil && *o.LimitBytes < 1 {
		invalid = append(invalid, fmt.Sprintf("limitBytes: Invalid value: %d: must be greater than 0", *o.LimitBytes))
	}
	if o.SinceSeconds != nil && o.SinceTime != nil {
		invalid = append(invalid, "sinceSeconds: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified")
	}
	if o.SinceSeconds != nil && *o.SinceSeconds < 1 {
		invalid = append(invalid, fmt.Sprintf("sinceSeconds: Invalid value: %d: must be greater than 0", *o.SinceSeconds))
	}
	if len(invalid) > 0 {
		return nil, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid,
			Message: fmt.Sprintf("PodLogOptions %q is invalid: %s", pod, strings.Join(invalid, ", ")),
			Details: &metav1.StatusDetails{Kind: "PodLogOptions", Name: pod}}}
	}
	return o, nil
}

// logQuery is what the kubelet's /containerLogs is asked, as upstream's
// LogLocation writes it.
func logQuery(o *corev1.PodLogOptions) url.Values {
	v := url.Values{}
	if o.Follow {
		v.Set("follow", "true")
	}
	if o.Previous {
		v.Set("previous", "true")
	}
	if o.Timestamps {
		v.Set("timestamps", "true")
	}
	if o.SinceSeconds != nil {
		v.Set("sinceSeconds", strconv.FormatInt(*o.SinceSeconds, 10))
	}
	if o.SinceTime != nil {
		v.Set("sinceTime", o.SinceTime.UTC().Format(time.RFC3339))
	}
	if o.TailLines != nil {
		v.Set("tailLines", strconv.FormatInt(*o.TailLines, 10))
	}
	if o.LimitBytes != nil {
		v.Set("limitBytes", strconv.FormatInt(*o.LimitBytes, 10))
	}
	return v
}

// podLog streams a container's log from its kubelet. insecureSkipTLSVerifyBackend
// is accepted and ignored: the kubelet's certificate is always verified.
func (q *request) podLog() error {
	if q.r.Method != http.MethodGet && q.r.Method != http.MethodHead {
		return apierrors.NewMethodNotSupported(q.subGR(), strings.ToLower(q.r.Method))
	}
	if q.s.kubelets == nil {
		return errNoKubeletClient
	}
	opts, err := parsePodLogOptions(q.r.URL.Query(), q.ri.Name)
	if err != nil {
		return err
	}
	pod, err := q.connectPod()
	if err != nil {
		return err
	}
	container, err := chooseContainer(pod, opts.Container)
	if err != nil {
		return err
	}
	node, err := podNode(pod)
	if err != nil {
		return err
	}
	loc, rt, err := q.s.kubeletLocation(node)
	if err != nil {
		return err
	}
	loc.Path = fmt.Sprintf("/containerLogs/%s/%s/%s", pod.Namespace, pod.Name, container)
	loc.RawQuery = logQuery(opts).Encode()
	req, err := http.NewRequestWithContext(q.ctx(), http.MethodGet, loc.String(), nil)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("the kubelet of node %q: %w", node, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return kubeletRefusal(resp, q.subGR(), q.ri.Name)
	}
	q.w.Header().Set("Content-Type", "text/plain")
	q.w.WriteHeader(http.StatusOK)
	if q.r.Method == http.MethodHead {
		return nil
	}
	var src io.Reader = resp.Body
	if opts.LimitBytes != nil {
		src = io.LimitReader(src, *opts.LimitBytes)
	}
	var dst io.Writer = q.w
	if opts.Follow {
		dst = flushWriter{w: q.w, rc: http.NewResponseController(q.w)}
	}
	_, _ = io.CopyBuffer(dst, src, make([]byte, 32<<10))
	return nil
}

// flushWriter flushes every write: a followed log reaches the client as
// the kubelet sends it.
type flushWriter struct {
	w  io.Writer
	rc *http.ResponseController
}

func (f flushWriter) Write(b []byte) (int, error) {
	n, err := f.w.Write(b)
	if err == nil {
		err = f.rc.Flush()
	}
	return n, err
}

// streamQuery checks and forwards the options of exec (command, stdin,
// stdout, stderr, tty), attach (the same but the command) and port-forward
// (ports). Stdout and stderr default to true, as upstream's
// PodExecOptions and PodAttachOptions.
func streamQuery(sub string, query url.Values) (url.Values, apiproxy.Options, error) {
	out := url.Values{}
	var opts apiproxy.Options
	if sub == "portforward" {
		for _, p := range query["ports"] {
			for _, s := range strings.Split(p, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(s))
				if err != nil || n < 1 || n > 65535 {
					return nil, opts, apierrors.NewBadRequest(fmt.Sprintf("invalid port %q: must be between 1 and 65535", s))
				}
				out.Add("ports", strconv.Itoa(n))
			}
		}
		return out, opts, nil
	}
	flag := func(k string, def bool) (bool, error) {
		v := query.Get(k)
		if v == "" {
			return def, nil
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, apierrors.NewBadRequest(fmt.Sprintf("%s: %q is not a boolean", k, v))
		}
		return b, nil
	}
	var err error
	for _, f := range []struct {
		k   string
		def bool
		dst *bool
	}{{"stdin", false, &opts.Stdin}, {"stdout", true, &opts.Stdout}, {"stderr", true, &opts.Stderr}, {"tty", false, &opts.Tty}} {
		if *f.dst, err = flag(f.k, f.def); err != nil {
			return nil, opts, err
		}
		out.Set(f.k, strconv.FormatBool(*f.dst))
	}
	if sub == "exec" {
		if len(query["command"]) == 0 {
			return nil, opts, apierrors.NewBadRequest("you must specify at least one command for the container")
		}
		out["command"] = append([]string(nil), query["command"]...)
	}
	return out, opts, nil
}

// podStream proxies exec, attach and port-forward upgrades to the pod's
// kubelet.
func (q *request) podStream() error {
	sub := q.ri.Subresource
	if q.r.Method != http.MethodGet && q.r.Method != http.MethodPost {
		return apierrors.NewMethodNotSupported(q.subGR(), strings.ToLower(q.r.Method))
	}
	if q.r.Method == http.MethodGet {
		// A GET (the WebSocket upgrade) was authorized as get; it
		// writes to the container as much as a POST does.
		a := Attributes{User: q.user, Verb: "create", Resource: "pods", Subresource: sub, Namespace: q.ri.Namespace, Name: q.ri.Name}
		if err := q.s.chain.Authz.Authorize(q.ctx(), a); err != nil {
			return apierrors.NewForbidden(q.res.gvr.GroupResource(), q.ri.Name, err)
		}
	}
	if q.s.kubelets == nil {
		return errNoKubeletClient
	}
	query := q.r.URL.Query()
	params, opts, err := streamQuery(sub, query)
	if err != nil {
		return err
	}
	pod, err := q.connectPod()
	if err != nil {
		return err
	}
	path := fmt.Sprintf("/portForward/%s/%s", pod.Namespace, pod.Name)
	if sub != "portforward" {
		container, err := chooseContainer(pod, query.Get("container"))
		if err != nil {
			return err
		}
		path = fmt.Sprintf("/%s/%s/%s/%s", sub, pod.Namespace, pod.Name, container)
	}
	node, err := podNode(pod)
	if err != nil {
		return err
	}
	loc, rt, err := q.s.kubeletLocation(node)
	if err != nil {
		return err
	}
	loc.Path, loc.RawQuery = path, params.Encode()
	upgrade := proxy.NewUpgradeAwareHandler(loc, rt, false, true, proxyResponder{})
	var h http.Handler
	if sub == "portforward" {
		h = apiproxy.NewTranslatingHandler(upgrade, apiproxy.NewTunnelingHandler(upgrade), wsstream.IsWebSocketRequestWithTunnelingProtocol)
	} else {
		h = apiproxy.NewTranslatingHandler(upgrade, apiproxy.NewStreamTranslatorHandler(loc, rt, 0, opts), wsstream.IsWebSocketRequestWithStreamCloseProtocol)
	}
	h.ServeHTTP(q.w, q.proxiedRequest())
	return nil
}

// kubeletStreams are the kubelet's paths that stream into a container.
var kubeletStreams = map[string]bool{"exec": true, "attach": true, "portForward": true, "run": true}

// nodeProxy proxies /api/v1/nodes/{name}/proxy/{path} to the node's
// kubelet, any method, upgrades too.
func (q *request) nodeProxy() error {
	if q.s.kubelets == nil {
		return errNoKubeletClient
	}
	loc, rt, err := q.s.kubeletLocation(q.ri.Name)
	if err != nil {
		return err
	}
	marker := "/nodes/" + q.ri.Name + "/proxy"
	p := q.r.URL.Path
	if i := strings.Index(p, marker); i >= 0 {
		loc.Path = p[i+len(marker):]
	}
	// An upgrade, or the kubelet's exec, attach, portForward or run,
	// writes to a container whatever the method: create, as the pods'
	// own connect subresources (a GET was authorized as get).
	first, _, _ := strings.Cut(strings.TrimPrefix(loc.Path, "/"), "/")
	if q.r.Method != http.MethodPost && (httpstream.IsUpgradeRequest(q.r) || kubeletStreams[first]) {
		a := Attributes{User: q.user, Verb: "create", Resource: "nodes", Subresource: "proxy", Name: q.ri.Name}
		if err := q.s.chain.Authz.Authorize(q.ctx(), a); err != nil {
			return apierrors.NewForbidden(q.res.gvr.GroupResource(), q.ri.Name, err)
		}
	}
	// The upgrade path sends Location as it is: the query goes with it
	// (exec's command, container, stdin...).
	loc.RawQuery = q.r.URL.RawQuery
	h := proxy.NewUpgradeAwareHandler(loc, rt, false, false, proxyResponder{})
	h.RejectForwardingRedirects = true
	h.ServeHTTP(q.w, q.proxiedRequest())
	return nil
}
