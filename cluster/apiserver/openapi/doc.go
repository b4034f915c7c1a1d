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
// names and required fields, patchStrategy/patchMergeKey tags give the
// x-kubernetes-patch-* extensions, SwaggerDoc() gives descriptions, and
// definition names follow the upstream convention
// (k8s.io/api/core/v1.Pod -> io.k8s.api.core.v1.Pod).
//
// What kubectl needs from these documents (see the report in spec_test.go
// and handler.go comments): every PATCH/POST/PUT operation carries the
// "fieldValidation" query parameter and an x-kubernetes-group-version-kind
// extension, PATCH request bodies list application/strategic-merge-patch+json,
// and every kind's definition carries x-kubernetes-group-version-kind as a
// list. With that, kubectl (>= 1.27) skips client-side validation and sends
// ?fieldValidation=Strict (or Warn) to the server instead.
//
// This package owns only the OpenAPI documents and their HTTP handler. It
// must not touch storage, admission, or the handling of resource requests:
// it describes the API, it does not serve it.
package openapi
