// Package admission holds the logic of kstep's admission plugins, free of
// the HTTP server: default not-ready/unreachable tolerations, LimitRange
// defaults and bounds, ResourceQuota usage and limits of every resource,
// pod priority from PriorityClasses (upstream's Priority plugin), and the calls to
// admission webhooks (admission.k8s.io/v1 AdmissionReview) with their
// rules, selectors, timeouts and failure policies.
//
// It owns these decisions and nothing else. It must not read or write
// storage: the apiserver (cluster/apiserver/admission.go, priority.go)
// hands it objects from its watch caches and applies what it decides.
// ResourceQuota covers every resource: the standard names and
// count/<resource>.<group> (CountedResource, ObjectUsage). The
// ResourceQuota controller reuses ObjectUsage and Usage so admission and
// status.used count alike.
package admission
