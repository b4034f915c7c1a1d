package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"sort"
	"strings"

	"github.com/kstep-dev/kstep/cluster/apiserver/openapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
)

// Version is what /version reports: the Kubernetes API level kstep serves
// (the k8s.io/api release its types come from).
var Version = version.Info{
	Major:      "1",
	Minor:      "37",
	GitVersion: "v1.37.2-kstep",
	Platform:   runtime.GOOS + "/" + runtime.GOARCH,
	GoVersion:  runtime.Version(),
	Compiler:   runtime.Compiler,
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, err)
		return
	}
	writeBytes(w, code, outJSON, b)
}

func (s *Server) serveVersion(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, Version)
}

func notFoundPath(path string) error {
	return apierrors.NewGenericServerResponse(http.StatusNotFound, "", schema.GroupResource{}, "", fmt.Sprintf("the server could not find the requested resource (path %s)", path), 0, false)
}

// serveDiscovery serves the legacy (unaggregated) discovery documents. A
// client asking for aggregated discovery gets these too and, seeing the
// plain content type, falls back to reading them, as client-go does.
func (s *Server) serveDiscovery(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) == 1 && parts[0] == "api":
		writeJSON(w, http.StatusOK, &metav1.APIVersions{
			TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
			Versions: []string{"v1"},
			ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
				{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host},
			},
		})
	case len(parts) == 1 && parts[0] == "apis":
		writeJSON(w, http.StatusOK, s.groupList())
	case len(parts) == 2 && parts[0] == "api" && parts[1] == "v1":
		writeJSON(w, http.StatusOK, s.resourceList(schema.GroupVersion{Version: "v1"}))
	case len(parts) == 2 && parts[0] == "apis":
		for _, g := range s.groupList().Groups {
			if g.Name == parts[1] {
				g := g
				g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
				writeJSON(w, http.StatusOK, &g)
				return
			}
		}
		writeError(w, notFoundPath(r.URL.Path))
	case len(parts) == 3 && parts[0] == "apis":
		gv := schema.GroupVersion{Group: parts[1], Version: parts[2]}
		if !containsGV(s.groups, gv) {
			writeError(w, notFoundPath(r.URL.Path))
			return
		}
		writeJSON(w, http.StatusOK, s.resourceList(gv))
	default:
		writeError(w, notFoundPath(r.URL.Path))
	}
}

func (s *Server) groupList() *metav1.APIGroupList {
	out := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	for _, gv := range s.groups {
		if gv.Group == "" {
			continue
		}
		v := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version}
		found := false
		for i := range out.Groups {
			if out.Groups[i].Name == gv.Group {
				out.Groups[i].Versions = append(out.Groups[i].Versions, v)
				found = true
			}
		}
		if !found {
			out.Groups = append(out.Groups, metav1.APIGroup{Name: gv.Group, Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v})
		}
	}
	return out
}

func (s *Server) resourceList(gv schema.GroupVersion) *metav1.APIResourceList {
	out := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv.String()}
	var rs []*resource
	for _, r := range s.resources {
		if r.gvr.GroupVersion() == gv {
			rs = append(rs, r)
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].gvr.Resource < rs[j].gvr.Resource })
	for _, r := range rs {
		out.APIResources = append(out.APIResources, metav1.APIResource{
			Name: r.gvr.Resource, SingularName: r.singular, Namespaced: r.namespaced, Kind: r.kind,
			Verbs: r.verbs(), ShortNames: r.shortNames, Categories: r.categories,
		})
		for _, sub := range r.subresources() {
			ar := metav1.APIResource{Name: r.gvr.Resource + "/" + sub, Namespaced: r.namespaced, Kind: r.kind}
			switch sub {
			case "status":
				ar.Verbs = []string{"get", "patch", "update"}
			case "scale":
				ar.Group, ar.Version, ar.Kind = scaleGVK.Group, scaleGVK.Version, scaleGVK.Kind
				ar.Verbs = []string{"get", "patch", "update"}
			case "binding":
				ar.Kind = bindingGVK.Kind
				ar.Verbs = []string{"create"}
			case "eviction":
				// kubectl drain finds the Eviction's version here.
				ar.Group, ar.Version, ar.Kind = evictionGVK.Group, evictionGVK.Version, evictionGVK.Kind
				ar.Verbs = []string{"create"}
			case "finalize":
				ar.Verbs = []string{"update"}
			case "log":
				ar.Verbs = []string{"get"}
			case "exec", "attach", "portforward":
				// upstream's kinds: PodExecOptions, PodAttachOptions,
				// PodPortForwardOptions.
				ar.Kind = connectKinds[sub]
				ar.Verbs = []string{"create", "get"}
			case "proxy":
				ar.Kind = connectKinds[r.gvr.Resource+"/"+sub]
				ar.Verbs = []string{"create", "delete", "get", "patch", "update"}
			}
			out.APIResources = append(out.APIResources, ar)
		}
	}
	if gv == metricsGV {
		out.APIResources = append(out.APIResources, metricsAPIResources()...)
	}
	out.APIResources = append(out.APIResources, reviewResources[gv]...)
	return out
}

// connectKinds are the option kinds upstream's discovery names for the
// connect subresources.
var connectKinds = map[string]string{"exec": "PodExecOptions", "attach": "PodAttachOptions", "portforward": "PodPortForwardOptions", "nodes/proxy": "NodeProxyOptions"}

// openapiResource describes r for the OpenAPI documents.
func openapiResource(r *resource) openapi.Resource {
	o := openapi.Resource{GVK: r.gvk(), Plural: r.gvr.Resource, Namespaced: r.namespaced, Verbs: r.verbs(), Object: r.newObj(), List: r.newList()}
	for _, sub := range r.subresources() {
		switch sub {
		case "status":
			o.Subresources = append(o.Subresources, openapi.Subresource{Name: sub, GVK: r.gvk(), Verbs: []string{"get", "patch", "update"}})
		case "scale":
			o.Subresources = append(o.Subresources, openapi.Subresource{Name: sub, GVK: scaleGVK, Verbs: []string{"get", "patch", "update"}})
		case "binding":
			o.Subresources = append(o.Subresources, openapi.Subresource{Name: sub, GVK: bindingGVK, Verbs: []string{"create"}})
		case "eviction":
			o.Subresources = append(o.Subresources, openapi.Subresource{Name: sub, GVK: evictionGVK, Verbs: []string{"create"}})
		case "finalize":
			o.Subresources = append(o.Subresources, openapi.Subresource{Name: sub, GVK: r.gvk(), Verbs: []string{"update"}})
		}
	}
	return o
}
