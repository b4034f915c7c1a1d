package apiserver

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kstep-dev/kstep/cluster/storage"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	apistorage "k8s.io/apiserver/pkg/storage"
)

// requestInfo is what the URL of a resource request says.
type requestInfo struct {
	Verb        string // get list watch create update patch delete deletecollection
	Group       string
	Version     string
	Namespace   string
	Resource    string
	Name        string
	Subresource string
}

// namespaceSubresources are the subresources of a namespace itself, which
// would otherwise read as a resource inside it.
var namespaceSubresources = map[string]bool{"status": true, "finalize": true}

// parseRequestInfo reads /api/v1/... and /apis/<group>/<version>/... paths.
func parseRequestInfo(r *http.Request) (*requestInfo, bool) {
	path := strings.Trim(r.URL.Path, "/")
	parts := strings.Split(path, "/")
	ri := &requestInfo{}
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		ri.Version, parts = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		ri.Group, ri.Version, parts = parts[1], parts[2], parts[3:]
	default:
		return nil, false
	}
	watchPath := false
	if parts[0] == "watch" {
		watchPath, parts = true, parts[1:]
		if len(parts) == 0 {
			return nil, false
		}
	}
	if parts[0] == "namespaces" && len(parts) > 1 {
		if len(parts) >= 3 && !namespaceSubresources[parts[2]] {
			ri.Namespace, parts = parts[1], parts[2:]
		} else {
			ri.Namespace = parts[1] // a namespace is addressed within itself, as upstream
		}
	}
	ri.Resource = parts[0]
	if len(parts) > 1 {
		ri.Name = parts[1]
	}
	if len(parts) > 2 {
		ri.Subresource = parts[2]
	}
	// nodes/proxy carries the path to proxy after it (connect.go).
	proxy := len(parts) > 2 && parts[2] == "proxy" && !watchPath
	if len(parts) > 3 && !proxy {
		return nil, false
	}
	q := r.URL.Query()
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case watchPath || (!proxy && boolParam(q, "watch")):
			ri.Verb = "watch"
		case ri.Name == "":
			ri.Verb = "list"
		default:
			ri.Verb = "get"
		}
	case http.MethodPost:
		ri.Verb = "create"
	case http.MethodPut:
		ri.Verb = "update"
	case http.MethodPatch:
		ri.Verb = "patch"
	case http.MethodDelete:
		if ri.Name == "" {
			ri.Verb = "deletecollection"
		} else {
			ri.Verb = "delete"
		}
	default:
		return nil, false
	}
	return ri, true
}

func boolParam(q url.Values, k string) bool {
	v := q.Get(k)
	return v == "true" || v == "1"
}

// listParams are the parsed query parameters of a list or watch.
type listParams struct {
	filter           storage.Filter
	rv               string
	rvMatch          metav1.ResourceVersionMatch
	limit            int64
	cont             string
	watch            bool
	bookmarks        bool
	sendInitial      *bool
	timeout          time.Duration
	fieldSelectorRaw string
}

func parseListParams(q url.Values, r *resource, namespace string) (*listParams, error) {
	p := &listParams{
		rv:        q.Get("resourceVersion"),
		rvMatch:   metav1.ResourceVersionMatch(q.Get("resourceVersionMatch")),
		cont:      q.Get("continue"),
		watch:     boolParam(q, "watch"),
		bookmarks: boolParam(q, "allowWatchBookmarks"),
	}
	p.filter.Namespace = namespace
	if s := q.Get("labelSelector"); s != "" {
		sel, err := labels.Parse(s)
		if err != nil {
			return nil, badRequest("unable to parse requirement: %v", err)
		}
		p.filter.Label = sel
	}
	if s := q.Get("fieldSelector"); s != "" {
		sel, err := fields.ParseSelector(s)
		if err != nil {
			return nil, badRequest("invalid field selector %q: %v", s, err)
		}
		allowed := r.selectableFields()
		for _, req := range sel.Requirements() {
			if !allowed[req.Field] {
				return nil, badRequest("field label not supported: %s", req.Field)
			}
		}
		p.filter.Field, p.fieldSelectorRaw = sel, s
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return nil, badRequest("invalid limit %q", s)
		}
		p.limit = n
	}
	if s := q.Get("timeoutSeconds"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return nil, badRequest("invalid timeoutSeconds %q", s)
		}
		p.timeout = time.Duration(n) * time.Second
	}
	if s := q.Get("sendInitialEvents"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, badRequest("invalid sendInitialEvents %q", s)
		}
		p.sendInitial = &b
	}
	if p.rv != "" && p.rv != "0" {
		if _, err := parseRV(p.rv); err != nil {
			return nil, err
		}
	}
	switch p.rvMatch {
	case "", metav1.ResourceVersionMatchNotOlderThan, metav1.ResourceVersionMatchExact:
	default:
		return nil, badRequest("unsupported resourceVersionMatch %q", p.rvMatch)
	}
	if p.rvMatch != "" && p.rv == "" && (p.sendInitial == nil || !*p.sendInitial) {
		return nil, badRequest("resourceVersionMatch is forbidden unless resourceVersion is provided")
	}
	if p.cont != "" && p.rv != "" && p.rv != "0" {
		return nil, badRequest("specifying resource version is not allowed when using continue")
	}
	if p.sendInitial != nil && *p.sendInitial {
		if !p.watch {
			return nil, badRequest("sendInitialEvents is forbidden for list")
		}
		if p.rvMatch != metav1.ResourceVersionMatchNotOlderThan {
			return nil, badRequest("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
		}
		if !p.bookmarks {
			return nil, badRequest("sendInitialEvents requires allowWatchBookmarks=true")
		}
	}
	return p, nil
}

func parseRV(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, badRequest("invalid resource version %q", s)
	}
	return n, nil
}

// continueToken is the continue of a paginated list: the revision the
// first page was read at and the key after which the next page starts.
// Its text is upstream's (k8s.io/apiserver/pkg/storage): base64 of
// {"v","rv","start"} with start relative to the list's prefix, so a token
// cannot start a list outside its own prefix.
type continueToken struct {
	RV    int64
	Start string
}

// encode writes the token of a list over prefix.
func (t continueToken) encode(prefix string) (string, error) {
	return apistorage.EncodeContinue(t.Start, prefix, t.RV)
}

// parseContinue reads the continue of a list over prefix (which ends in
// "/"): any token upstream's decoder refuses (not base64 JSON, another
// version, an empty or unclean start such as "../", a revision below 1)
// is a 400; an accepted one starts strictly inside prefix.
func parseContinue(s, prefix string) (continueToken, error) {
	start, rv, err := apistorage.DecodeContinue(s, prefix)
	switch {
	case err != nil:
	case rv < 1:
		err = apistorage.ErrInvalidStartRV
	case start == prefix:
		// "/" cleans to the prefix itself: no page ever ends there.
		err = apistorage.ErrEmptyStartKey
	}
	if err != nil {
		return continueToken{}, badRequest("invalid continue token %q: %v", excerpt(s, maxQuotedRun), err)
	}
	return continueToken{RV: rv, Start: start}, nil
}
