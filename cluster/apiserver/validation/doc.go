// Package validation decides which objects are valid: the validation stage
// of the apiserver's write chain (authn → authz → mutating admission
// (defaulting) → validation → validating admission → storage).
//
// It owns three questions, one function each, asked of the v1 types kstep
// serves (core/v1 Namespace, Pod, Node, Service, Endpoints, Event,
// ConfigMap, Secret, ServiceAccount, Binding, ReplicationController,
// ResourceQuota, LimitRange, PodTemplate; events.k8s.io/v1 Event;
// coordination.k8s.io/v1 Lease; discovery.k8s.io/v1 EndpointSlice;
// apps/v1 ReplicaSet, Deployment, DaemonSet, StatefulSet,
// ControllerRevision; batch/v1 Job, CronJob; autoscaling/v1 Scale;
// admissionregistration.k8s.io/v1 webhook configurations;
// scheduling.k8s.io/v1 PriorityClass):
//
//   - ValidateCreate(obj): is this whole object acceptable?
//   - ValidateUpdate(obj, old): is obj acceptable, and is going from old to
//     obj allowed (immutable metadata and fields, pod spec immutability,
//     selectors, cluster IPs, ...)?
//   - ValidateStatusUpdate(obj, old): is this write to /status allowed?
//
// Each also refuses what no client could read back (nesting.go): managed
// fields nested deeper than the object itself could need, an object whose
// JSON nests deeper than MaxObjectDepth (lists of it would exceed the
// decoders' 10,000 levels).
//
// Each answers with a field.ErrorList that the apiserver turns into a 422
// Invalid (apierrors.NewInvalid). Errors carry the JSON field path of the
// offending value, upstream's error types (Required, Invalid, Forbidden,
// NotSupported, TooLong, Duplicate, ...) and upstream's messages.
//
// The rules are a faithful subset of upstream's
// k8s.io/kubernetes/pkg/apis/{core,apps,coordination,discovery,autoscaling,scheduling}/validation,
// rewritten for the v1 types and built on apimachinery's helpers
// (ValidateObjectMeta, ValidateObjectMetaUpdate, ValidateLabels,
// ValidateLabelSelector, IsDNS1123Label, ...). Where upstream's path has a
// typo (status.Phase, metadata.taints) the correct JSON path is used; where
// upstream relies on its registry having allocated a field before
// validation (clusterIP, nodePort, healthCheckNodePort), the field is
// validated when set but not required.
//
// What callers must provide: objects already defaulted (package defaults);
// on create, a namespace filled from the URL for namespaced kinds (an empty
// name is accepted when generateName is set); on update, the stored
// resourceVersion, uid, creationTimestamp and generation carried over, as
// upstream's registry does before validating, and values the registry
// allocated (clusterIP(s)) carried over when the client left them empty.
// Kinds this package does not know pass unvalidated.
//
// It also holds upstream's scheduling constants the rules use: the system
// PriorityClasses (SystemPriorityClasses, which the apiserver creates at
// start) and the highest value a user's class may have.
//
// It must not touch storage, HTTP or time: validation is a pure function of
// the objects it is given, it never reads other objects (no "does the
// namespace exist", no quota, no node lookups) and never changes them.
package validation
