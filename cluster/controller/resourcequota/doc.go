// Package resourcequota is the ResourceQuota controller: it keeps every
// quota's status (hard mirrors spec.hard, used is what the namespace's pods
// use now) level-triggered from the pod and quota informers.
//
// It owns ResourceQuota status and nothing else. Admission in the
// apiserver enforces quotas on its own, from its pod watch cache, so a slow
// or absent controller never lets a pod past a quota; status.used is the
// report. Usage is counted by cluster/apiserver/admission.Usage, the same
// function admission uses, so the two never disagree on what a pod uses.
package resourcequota
