package openapi

import (
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// param is a non-body operation parameter.
type param struct {
	Name        string
	In          string // path, query
	Description string
	Type        string // string, integer, boolean
	Required    bool
	UniqueItems bool
}

// media is one media type of a request or response body and its schema.
type media struct {
	Type   string
	Schema *jsonSchema
}

type response struct {
	Code        string
	Description string
	Content     []media // empty: no body (e.g. 401)
}

type operation struct {
	Method       string // get, put, post, delete, patch
	ID           string
	Description  string
	Action       string // x-kubernetes-action
	GVK          *schema.GroupVersionKind
	Tags         []string
	Params       []param
	Body         []media
	BodyRequired bool
	Responses    []response
}

type pathItem struct {
	Path   string
	Params []param // shared by all operations of the path
	Ops    []*operation
}

// Media types. The apiserver is expected to serve JSON and YAML; watches
// stream JSON WatchEvents.
const (
	mediaJSON      = "application/json"
	mediaYAML      = "application/yaml"
	mediaJSONWatch = "application/json;stream=watch"
	mediaAny       = "*/*"
)

var (
	responseMedia = []string{mediaJSON, mediaYAML}
	// Patch media types, in upstream order. kubectl apply only uses
	// strategic merge patch when the PATCH operation lists it.
	patchMediaTypes = []string{
		"application/json-patch+json",
		"application/merge-patch+json",
		"application/strategic-merge-patch+json",
		"application/apply-patch+yaml",
	}
)

// Parameter descriptions follow upstream's wording.
var (
	paramPretty = param{Name: "pretty", In: "query", Type: "string", UniqueItems: true,
		Description: "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget)."}
	paramName      = param{Name: "name", In: "path", Type: "string", Required: true, UniqueItems: true}
	paramNamespace = param{Name: "namespace", In: "path", Type: "string", Required: true, UniqueItems: true,
		Description: "object name and auth scope, such as for teams and projects"}
	paramDryRun = param{Name: "dryRun", In: "query", Type: "string", UniqueItems: true,
		Description: "When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed"}
	paramFieldManager = param{Name: "fieldManager", In: "query", Type: "string", UniqueItems: true,
		Description: "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint."}
	paramFieldManagerPatch = param{Name: "fieldManager", In: "query", Type: "string", UniqueItems: true,
		Description: "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint. This field is required for apply requests (application/apply-patch) but optional for non-apply patch types (JsonPatch, MergePatch, StrategicMergePatch)."}
	// paramFieldValidation is what kubectl looks for on the PATCH operation
	// of a kind to decide that the server validates fields itself.
	paramFieldValidation = param{Name: "fieldValidation", In: "query", Type: "string", UniqueItems: true,
		Description: "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are silently dropped from the object, and will ignore all but the last duplicate field that the decoder encounters. This is the default behavior prior to v1.23. - Warn: This will send a warning via the standard warning response header for each unknown field that is dropped from the object, and for each duplicate field that is encountered. The request will still succeed if there are no other errors, and will only persist the last of any duplicate fields. This is the default in v1.23+ - Strict: This will fail the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are present. The error returned from the server will contain all unknown and duplicate fields encountered."}
	paramForce = param{Name: "force", In: "query", Type: "boolean", UniqueItems: true,
		Description: "Force is going to \"force\" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests."}

	listParams = []param{
		{Name: "continue", In: "query", Type: "string", UniqueItems: true,
			Description: "The continue option should be set when retrieving more results from the server. Since this value is server defined, clients may only use the continue value from a previous query result with identical query parameters (except for the value of continue) and the server may reject a continue value it does not recognize."},
		{Name: "fieldSelector", In: "query", Type: "string", UniqueItems: true,
			Description: "A selector to restrict the list of returned objects by their fields. Defaults to everything."},
		{Name: "labelSelector", In: "query", Type: "string", UniqueItems: true,
			Description: "A selector to restrict the list of returned objects by their labels. Defaults to everything."},
		{Name: "limit", In: "query", Type: "integer", UniqueItems: true,
			Description: "limit is a maximum number of responses to return for a list call. If more items exist, the server will set the `continue` field on the list metadata to a value that can be used with the same initial query to retrieve the next set of results."},
		{Name: "resourceVersion", In: "query", Type: "string", UniqueItems: true,
			Description: "resourceVersion sets a constraint on what resource versions a request may be served from. Defaults to unset"},
		{Name: "resourceVersionMatch", In: "query", Type: "string", UniqueItems: true,
			Description: "resourceVersionMatch determines how resourceVersion is applied to list calls. Defaults to unset"},
		{Name: "timeoutSeconds", In: "query", Type: "integer", UniqueItems: true,
			Description: "Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or inactivity."},
	}
	watchParams = []param{
		{Name: "allowWatchBookmarks", In: "query", Type: "boolean", UniqueItems: true,
			Description: "allowWatchBookmarks requests watch events with type \"BOOKMARK\". Servers that do not implement bookmarks may ignore this flag and bookmarks are sent at the server's discretion."},
		{Name: "sendInitialEvents", In: "query", Type: "boolean", UniqueItems: true,
			Description: "`sendInitialEvents=true` may be set together with `watch=true`. In that case, the watch stream will begin with synthetic events to produce the current state of objects in the collection."},
		{Name: "watch", In: "query", Type: "boolean", UniqueItems: true,
			Description: "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications. Specify resourceVersion."},
	}
	deleteParams = []param{
		paramDryRun,
		{Name: "gracePeriodSeconds", In: "query", Type: "integer", UniqueItems: true,
			Description: "The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero indicates delete immediately. If this value is nil, the default grace period for the specified type will be used. Defaults to a per object value if not specified. zero means delete immediately."},
		{Name: "ignoreStoreReadErrorWithClusterBreakingPotential", In: "query", Type: "boolean", UniqueItems: true,
			Description: "if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error."},
		{Name: "orphanDependents", In: "query", Type: "boolean", UniqueItems: true,
			Description: "Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the dependent objects be orphaned. If true/false, the \"orphan\" finalizer will be added to/removed from the object's finalizers list. Either this field or PropagationPolicy may be set, but not both."},
		{Name: "propagationPolicy", In: "query", Type: "string", UniqueItems: true,
			Description: "Whether and how garbage collection will be performed. Either this field or OrphanDependents may be set, but not both. The default policy is decided by the existing finalizer set in the metadata.finalizers and the resource-specific default policy. Acceptable values are: 'Orphan' - orphan the dependents; 'Background' - allow the garbage collector to delete the dependents in the background; 'Foreground' - a cascading policy that deletes all dependents in the foreground."},
	}
	writeParams = []param{paramDryRun, paramFieldManager, paramFieldValidation}
	patchParams = []param{paramDryRun, paramFieldManagerPatch, paramFieldValidation, paramForce}
)

// sharedDefs are the meta types operations reference.
type sharedDefs struct {
	status, deleteOptions, watchEvent, patch             *jsonSchema
	apiResourceList, apiGroup, apiGroupList, apiVersions *jsonSchema
}

// gvNames holds the naming pieces of one group-version.
type gvNames struct {
	gv     schema.GroupVersion
	key    string // index key: api/v1, apis/apps/v1
	prefix string // URL prefix: /api/v1, /apis/apps/v1
	opID   string // operationId infix: CoreV1, AppsV1, RbacAuthorizationV1
	tag    string // core_v1, apps_v1, rbacAuthorization_v1
}

func namesFor(gv schema.GroupVersion) gvNames {
	n := gvNames{gv: gv}
	if gv.Group == "" {
		n.key = "api/" + gv.Version
	} else {
		n.key = "apis/" + gv.Group + "/" + gv.Version
	}
	n.prefix = "/" + n.key
	g := groupCamel(gv.Group)
	n.opID = g + upperFirst(gv.Version)
	n.tag = lowerFirst(g) + "_" + gv.Version
	return n
}

// groupCamel turns an API group into upstream's operationId form:
// "" -> Core, apps -> Apps, rbac.authorization.k8s.io -> RbacAuthorization.
func groupCamel(group string) string {
	if group == "" {
		return "Core"
	}
	group = strings.TrimSuffix(group, ".k8s.io")
	var b strings.Builder
	for _, part := range strings.FieldsFunc(group, func(r rune) bool { return r == '.' || r == '-' }) {
		b.WriteString(upperFirst(part))
	}
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func hasVerb(verbs []string, v string) bool {
	for _, have := range verbs {
		if have == v {
			return true
		}
	}
	return false
}

func mediaOf(types []string, s *jsonSchema) []media {
	out := make([]media, len(types))
	for i, t := range types {
		out[i] = media{Type: t, Schema: s}
	}
	return out
}

func unauthorized() response { return response{Code: "401", Description: "Unauthorized"} }

// resourcePaths builds the paths of one resource and its subresources.
func (b *builder) resourcePaths(n gvNames, r *Resource, obj, list *jsonSchema, objType reflect.Type) ([]*pathItem, error) {
	gvk := r.GVK
	kind := gvk.Kind
	scope := kind
	collection := n.prefix + "/" + r.Plural
	if r.Namespaced {
		scope = "Namespaced" + kind
		collection = n.prefix + "/namespaces/{namespace}/" + r.Plural
	}
	item := collection + "/{name}"
	tags := []string{n.tag}
	sh := b.shared

	scopeParams := []param{paramPretty}
	if r.Namespaced {
		scopeParams = []param{paramNamespace, paramPretty}
	}
	nameParam := paramName
	nameParam.Description = "name of the " + kind
	itemParams := append([]param{nameParam}, scopeParams...)

	op := func(method, verbID, scopeSuffix, desc, action string, opGVK schema.GroupVersionKind) *operation {
		g := opGVK
		return &operation{
			Method: method, ID: verbID + n.opID + scope + scopeSuffix, Description: desc,
			Action: action, GVK: &g, Tags: tags,
		}
	}
	patchTypes := patchMediaTypes
	if !supportsStrategicMerge(objType) {
		patchTypes = []string{patchMediaTypes[0], patchMediaTypes[1], patchMediaTypes[3]}
	}

	var out []*pathItem
	watchable := hasVerb(r.Verbs, "watch")
	listQuery := func() []param {
		ps := append([]param(nil), listParams...)
		if watchable {
			ps = append(ps, watchParams...)
		}
		return ps
	}
	listResponse := func() response {
		c := mediaOf(responseMedia, list)
		if watchable {
			c = append(c, media{Type: mediaJSONWatch, Schema: sh.watchEvent})
		}
		return response{Code: "200", Description: "OK", Content: c}
	}

	// Collection: list, create, deletecollection.
	coll := &pathItem{Path: collection, Params: scopeParams}
	if hasVerb(r.Verbs, "list") {
		if list == nil {
			return nil, fmt.Errorf("openapi: resource %s (%v) has verb list but no List type", r.Plural, gvk)
		}
		o := op("get", "list", "", "list or watch objects of kind "+kind, "list", gvk)
		o.Params = listQuery()
		o.Responses = []response{listResponse(), unauthorized()}
		coll.Ops = append(coll.Ops, o)
	}
	if hasVerb(r.Verbs, "create") {
		o := op("post", "create", "", "create a "+kind, "post", gvk)
		o.Params = writeParams
		o.Body, o.BodyRequired = mediaOf([]string{mediaAny}, obj), true
		o.Responses = []response{
			{Code: "200", Description: "OK", Content: mediaOf(responseMedia, obj)},
			{Code: "201", Description: "Created", Content: mediaOf(responseMedia, obj)},
			{Code: "202", Description: "Accepted", Content: mediaOf(responseMedia, obj)},
			unauthorized(),
		}
		coll.Ops = append(coll.Ops, o)
	}
	if hasVerb(r.Verbs, "deletecollection") {
		o := &operation{Method: "delete", ID: "delete" + n.opID + "Collection" + scope,
			Description: "delete collection of " + kind, Action: "deletecollection", GVK: &gvk, Tags: tags}
		o.Params = append(append([]param(nil), listParams...), deleteParams...)
		if watchable {
			o.Params = append(o.Params, watchParams...)
		}
		o.Body = mediaOf([]string{mediaAny}, sh.deleteOptions)
		o.Responses = []response{{Code: "200", Description: "OK", Content: mediaOf(responseMedia, sh.status)}, unauthorized()}
		coll.Ops = append(coll.Ops, o)
	}
	if len(coll.Ops) > 0 {
		out = append(out, coll)
	}

	// All-namespaces list of a namespaced resource.
	if r.Namespaced && hasVerb(r.Verbs, "list") {
		o := &operation{Method: "get", ID: "list" + n.opID + kind + "ForAllNamespaces",
			Description: "list or watch objects of kind " + kind, Action: "list", GVK: &gvk, Tags: tags}
		o.Responses = []response{listResponse(), unauthorized()}
		ps := append([]param(nil), listQuery()...)
		ps = append(ps, paramPretty)
		out = append(out, &pathItem{Path: n.prefix + "/" + r.Plural, Params: ps, Ops: []*operation{o}})
	}

	// Item: get, update, patch, delete.
	it := &pathItem{Path: item, Params: itemParams}
	if hasVerb(r.Verbs, "get") {
		o := op("get", "read", "", "read the specified "+kind, "get", gvk)
		o.Responses = []response{{Code: "200", Description: "OK", Content: mediaOf(responseMedia, obj)}, unauthorized()}
		it.Ops = append(it.Ops, o)
	}
	if hasVerb(r.Verbs, "update") {
		o := op("put", "replace", "", "replace the specified "+kind, "put", gvk)
		o.Params = writeParams
		o.Body, o.BodyRequired = mediaOf([]string{mediaAny}, obj), true
		o.Responses = []response{
			{Code: "200", Description: "OK", Content: mediaOf(responseMedia, obj)},
			{Code: "201", Description: "Created", Content: mediaOf(responseMedia, obj)},
			unauthorized(),
		}
		it.Ops = append(it.Ops, o)
	}
	if hasVerb(r.Verbs, "patch") {
		o := op("patch", "patch", "", "partially update the specified "+kind, "patch", gvk)
		o.Params = patchParams
		o.Body, o.BodyRequired = mediaOf(patchTypes, sh.patch), true
		o.Responses = []response{
			{Code: "200", Description: "OK", Content: mediaOf(responseMedia, obj)},
			{Code: "201", Description: "Created", Content: mediaOf(responseMedia, obj)},
			unauthorized(),
		}
		it.Ops = append(it.Ops, o)
	}
	if hasVerb(r.Verbs, "delete") {
		o := op("delete", "delete", "", "delete a "+kind, "delete", gvk)
		o.Params = deleteParams
		o.Body = mediaOf([]string{mediaAny}, sh.deleteOptions)
		o.Responses = []response{
			{Code: "200", Description: "OK", Content: mediaOf(responseMedia, sh.status)},
			{Code: "202", Description: "Accepted", Content: mediaOf(responseMedia, sh.status)},
			unauthorized(),
		}
		it.Ops = append(it.Ops, o)
	}
	if len(it.Ops) > 0 {
		out = append(out, it)
	}

	// Subresources.
	for i := range r.Subresources {
		sub := &r.Subresources[i]
		pi, err := b.subresourcePath(n, r, sub, item, itemParams, scope, tags, obj, objType)
		if err != nil {
			return nil, err
		}
		if pi != nil {
			out = append(out, pi)
		}
	}
	return out, nil
}

// connectSubresources stream or proxy instead of exchanging objects.
var connectSubresources = map[string]bool{"exec": true, "attach": true, "portforward": true, "proxy": true}

func (b *builder) subresourcePath(n gvNames, r *Resource, sub *Subresource, item string, itemParams []param,
	scope string, tags []string, obj *jsonSchema, objType reflect.Type) (*pathItem, error) {
	if sub.Name == "" || strings.Contains(sub.Name, "/") {
		return nil, fmt.Errorf("openapi: resource %s has invalid subresource name %q", r.Plural, sub.Name)
	}
	kind := r.GVK.Kind
	subGVK := sub.GVK
	if subGVK.Kind == "" {
		subGVK = r.GVK
	}
	suffix := upperFirst(sub.Name)
	pi := &pathItem{Path: item + "/" + sub.Name}
	nameParam := itemParams[0]
	nameParam.Description = "name of the " + subGVK.Kind
	pi.Params = append([]param{nameParam}, itemParams[1:]...)
	str := &jsonSchema{Type: "string"}

	switch {
	case sub.Name == "log":
		o := &operation{Method: "get", ID: "read" + n.opID + scope + suffix, Description: "read log of the specified " + kind,
			Action: "get", GVK: &subGVK, Tags: tags}
		o.Responses = []response{{Code: "200", Description: "OK", Content: mediaOf([]string{"text/plain", mediaJSON, mediaYAML}, str)}, unauthorized()}
		pi.Ops = append(pi.Ops, o)
		return pi, nil
	case connectSubresources[sub.Name]:
		for _, m := range []string{"get", "post"} {
			o := &operation{Method: m, ID: "connect" + n.opID + upperFirst(m) + scope + suffix,
				Description: "connect " + strings.ToUpper(m) + " requests to " + sub.Name + " of " + kind,
				Action:      "connect", GVK: &subGVK, Tags: tags}
			o.Responses = []response{{Code: "200", Description: "OK", Content: mediaOf([]string{mediaAny}, str)}, unauthorized()}
			pi.Ops = append(pi.Ops, o)
		}
		return pi, nil
	}

	var subObj *jsonSchema
	subType := objType
	if subGVK == r.GVK {
		subObj = obj
	} else if t, ok := b.subTypes[subGVK]; ok {
		subType = t
		subObj = b.gen.schemaFor(t)
		b.gen.addGVK(t, subGVK)
	} else {
		// Unknown kind: describe the body as an arbitrary object.
		subType = nil
		subObj = &jsonSchema{Type: "object", Extensions: []extension{{"x-kubernetes-preserve-unknown-fields", true}}}
	}
	okResp := func(code, desc string) response {
		return response{Code: code, Description: desc, Content: mediaOf(responseMedia, subObj)}
	}
	g := subGVK
	if hasVerb(sub.Verbs, "get") {
		pi.Ops = append(pi.Ops, &operation{Method: "get", ID: "read" + n.opID + scope + suffix,
			Description: "read " + sub.Name + " of the specified " + kind, Action: "get", GVK: &g, Tags: tags,
			Responses: []response{okResp("200", "OK"), unauthorized()}})
	}
	if hasVerb(sub.Verbs, "create") {
		pi.Ops = append(pi.Ops, &operation{Method: "post", ID: "create" + n.opID + scope + suffix,
			Description: "create " + sub.Name + " of a " + kind, Action: "post", GVK: &g, Tags: tags,
			Params: writeParams, Body: mediaOf([]string{mediaAny}, subObj), BodyRequired: true,
			Responses: []response{okResp("200", "OK"), okResp("201", "Created"), okResp("202", "Accepted"), unauthorized()}})
	}
	if hasVerb(sub.Verbs, "update") {
		pi.Ops = append(pi.Ops, &operation{Method: "put", ID: "replace" + n.opID + scope + suffix,
			Description: "replace " + sub.Name + " of the specified " + kind, Action: "put", GVK: &g, Tags: tags,
			Params: writeParams, Body: mediaOf([]string{mediaAny}, subObj), BodyRequired: true,
			Responses: []response{okResp("200", "OK"), okResp("201", "Created"), unauthorized()}})
	}
	if hasVerb(sub.Verbs, "patch") {
		types := patchMediaTypes
		if subType == nil || !supportsStrategicMerge(subType) {
			types = []string{patchMediaTypes[0], patchMediaTypes[1], patchMediaTypes[3]}
		}
		pi.Ops = append(pi.Ops, &operation{Method: "patch", ID: "patch" + n.opID + scope + suffix,
			Description: "partially update " + sub.Name + " of the specified " + kind, Action: "patch", GVK: &g, Tags: tags,
			Params: patchParams, Body: mediaOf(types, b.shared.patch), BodyRequired: true,
			Responses: []response{okResp("200", "OK"), okResp("201", "Created"), unauthorized()}})
	}
	if len(pi.Ops) == 0 {
		return nil, nil
	}
	return pi, nil
}

// supportsStrategicMerge reports whether objects of type t can be strategic
// merge patched: typed structs can, free-form objects (unstructured custom
// resources) cannot, as upstream.
func supportsStrategicMerge(t reflect.Type) bool {
	t = deref(t)
	return t.Kind() == reflect.Struct && !implements(t, typeJSONMarshaler)
}

// discoveryPaths are the GET endpoints of API discovery that upstream lists
// in its OpenAPI documents.
func (b *builder) groupVersionDiscoveryPath(n gvNames) *pathItem {
	return &pathItem{Path: n.prefix + "/", Ops: []*operation{{
		Method: "get", ID: "get" + n.opID + "APIResources", Description: "get available resources",
		Tags:      []string{n.tag},
		Responses: []response{{Code: "200", Description: "OK", Content: mediaOf(responseMedia, b.shared.apiResourceList)}, unauthorized()},
	}}}
}

func (b *builder) groupDiscoveryPath(group string) *pathItem {
	g := groupCamel(group)
	return &pathItem{Path: "/apis/" + group + "/", Ops: []*operation{{
		Method: "get", ID: "get" + g + "APIGroup", Description: "get information of a group",
		Tags:      []string{lowerFirst(g)},
		Responses: []response{{Code: "200", Description: "OK", Content: mediaOf(responseMedia, b.shared.apiGroup)}, unauthorized()},
	}}}
}

func (b *builder) rootDiscoveryPaths() (core, apis *pathItem) {
	core = &pathItem{Path: "/api/", Ops: []*operation{{
		Method: "get", ID: "getCoreAPIVersions", Description: "get available API versions", Tags: []string{"core"},
		Responses: []response{{Code: "200", Description: "OK", Content: mediaOf(responseMedia, b.shared.apiVersions)}, unauthorized()},
	}}}
	apis = &pathItem{Path: "/apis/", Ops: []*operation{{
		Method: "get", ID: "getAPIVersions", Description: "get available API versions", Tags: []string{"apis"},
		Responses: []response{{Code: "200", Description: "OK", Content: mediaOf(responseMedia, b.shared.apiGroupList)}, unauthorized()},
	}}}
	return core, apis
}
