// Package printers turns API objects into meta.k8s.io/v1 Table rows for
// server-side printing, so that `kubectl get` (which asks for
// `application/json;as=Table;v=v1;g=meta.k8s.io`) shows the same columns and
// cell formats as it does against an upstream kube-apiserver, `-o wide`
// included.
//
// Owns: how objects become table rows — the column definitions (names, types,
// formats, descriptions and priorities copied from upstream
// k8s.io/kubernetes/pkg/printers/internalversion) and the cell values, such as
// the pod STATUS reason (Pending, ContainerCreating, Init:1/2, CrashLoopBackOff,
// Completed, Terminating, ...), READY "1/1", RESTARTS "5 (5m ago)", node ROLES,
// service PORT(S) "80:30080/TCP" and AGE via duration.HumanDuration.
//
// Must not touch: storage, HTTP, content negotiation, list metadata. The
// apiserver's handler decides when a Table is wanted, calls Table, fills
// Table.ResourceVersion/Continue/RemainingItemCount and sets each row's Object
// (full object or PartialObjectMetadata, per includeObject).
//
// Like upstream's table generator, Table always renders the wide columns
// (priority 1); kubectl hides them unless run with `-o wide`.
//
// Objects are the external (v1) Go types from k8s.io/api; an
// *unstructured.Unstructured is converted to its typed form first. Fields that
// v1 defaulting always sets (replicas, service type, port protocol) are read
// as their defaults when unset, so a row matches what upstream shows for the
// same object after defaulting.
//
// Resources without a dedicated printer get upstream's generic columns:
// NAME and AGE (or NAME and CREATED AT for RBAC roles and cluster roles, which
// upstream prints with its default table convertor).
package printers
