// Package job is the Job controller (batch/v1): it runs a Job's pods to
// completion. It keeps min(parallelism, completions still missing) pods
// active, counts succeeded and failed pods, and ends the Job with a
// Complete condition once spec.completions pods succeeded (with
// completions unset: once one succeeded and none is active) or a Failed
// condition when the failures exceed spec.backoffLimit
// (BackoffLimitExceeded), activeDeadlineSeconds passes (DeadlineExceeded)
// or a pod failure policy rule with action FailJob matches
// (PodFailurePolicy). A policy rule with action Ignore leaves its failed
// pod out of the count, Count counts it; rules match a failed pod's
// non-zero container exit codes (In or NotIn) or its conditions. Failed
// pods are replaced after upstream's backoff (10 s doubling per failure,
// capped at 6 min). Indexed Jobs give each pod its completion index
// (annotation, label, JOB_COMPLETION_INDEX, hostname) and complete when
// every index has succeeded. A suspended Job has no active pods. A finished
// Job with ttlSecondsAfterFinished is deleted, its pods with it
// (background propagation), that long after it finished.
//
// Counts are read from the pods that exist: kstep runs no pod garbage
// collector, so a Job's finished pods stay until the Job is deleted. Unlike
// upstream, pods carry no tracking finalizer (batch.kubernetes.io/
// job-tracking): a finished pod deleted by hand before the Job finished is
// not counted.
//
// It writes only pods and Jobs' status (and deletes Jobs whose TTL
// expired), only through the apiserver. It must not bind pods or touch
// other controllers' objects.
package job
