// Package resourcequota is the ResourceQuota controller: it keeps every
// quota's status (hard mirrors spec.hard, used is what the namespace's
// objects use now of every name kstep tracks: the standard names and
// count/<resource>.<group> of every served resource).
//
// It owns ResourceQuota status and nothing else. Admission in the
// apiserver charges each create to status.used (a compare-and-swap) before
// writing it, so creates raise usage without the controller; the
// controller recounts in full, as upstream's, when a quota is created or
// its spec.hard changes, when a counted object is deleted or changes what
// it uses (a pod turning terminal), and every ResyncPeriod: that is how
// usage goes down, and how a charge whose create then failed is undone.
// It follows pods and quotas from the start and starts an informer for
// any other resource when a quota first names it (discovery says which are
// served). Usage is counted by cluster/apiserver/admission (ObjectUsage,
// Usage), the functions admission uses, so the two never disagree on what
// an object uses.
package resourcequota
