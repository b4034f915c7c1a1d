// Package preflight asks an apiserver, before a run starts, whether the
// credentials it was given may do all the run does: one
// SelfSubjectAccessReview per Access (Check), and a *PermissionError naming
// every one they may not. Needs is what a load generator job and its
// cleanup do; kstep bench, kstep load and the chaos engine (which adds its
// own probe's, observers' and faults' accesses) all ask through it, so a
// run refused for its permissions is refused the same way by each.
//
// It owns: Access, Needs, Check, PermissionError.
// It must not start or touch a cluster beyond the reviews it asks, nor know
// bench's or chaos's runs: it imports loadgen (the job) and no other kstep
// package.
package preflight
