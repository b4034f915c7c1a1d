// Package openapi builds and serves the apiserver's OpenAPI documents:
//
//   - /openapi/v2: one Swagger 2.0 document with every served path and every
//     definition, as JSON (Accept: application/json) or as the gnostic
//     protobuf (Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf)
//     that client-go's discovery OpenAPISchema() and kubectl's client-side
//     validation and strategic-merge fallback read.
//   - /openapi/v3: the index {"paths": {"api/v1": {"serverRelativeURL":
//     "/openapi/v3/api/v1?hash=..."}, ...}} and one OpenAPI 3.0 document per
//     group-version (plus the "api", "apis" and "apis/<group>" discovery
//     documents), as JSON or gnostic protobuf, with ETag, ?hash= redirects and
//     immutable caching like upstream kube-openapi.
//
// The schemas are generated once, in New, by reflection over the Go types of
// the served resources (k8s.io/api and friends): json tags give property
// names and required fields (a field without omitempty/omitzero is
// required; upstream reads +optional comments, which reflection cannot
// see), patchStrategy/patchMergeKey tags give the
// x-kubernetes-patch-* extensions, SwaggerDoc() gives descriptions, and
// definition names follow the upstream convention
// (k8s.io/api/core/v1.Pod -> io.k8s.api.core.v1.Pod). The list and map
// semantics (x-kubernetes-list-type, -list-map-keys, -map-type), which
// reflection cannot see, come from client-go's structured-merge-diff
// schemas (listtypes.go, TypeConverter), the ones the apiserver's field
// manager merges server-side applies with: containers by name, ports by
// containerPort and protocol, as upstream's models.
//
// What kubectl (v1.32, checked against its sources and the real binary in
// kubectl_test.go) needs from these documents: every PATCH operation (and
// POST/PUT) lists the "fieldValidation" query parameter and carries an
// x-kubernetes-group-version-kind object; PATCH request bodies list
// application/strategic-merge-patch+json for typed kinds; every kind's
// definition carries x-kubernetes-group-version-kind as a list. kubectl
// then skips client-side validation, sends ?fieldValidation=Strict itself,
// and computes apply's strategic merge patch from the v3 schemas.
//
// This package owns only the OpenAPI documents and their HTTP handler. It
// must not touch storage, admission, or the handling of resource requests:
// it describes the API, it does not serve it.
package openapi
