// Package podtopologyspread is the PodTopologySpread filter and score, as
// upstream's: a pod's topologySpreadConstraints (maxSkew, topologyKey,
// whenUnsatisfiable, labelSelector, minDomains, matchLabelKeys,
// nodeAffinityPolicy, nodeTaintsPolicy) count the matching pods of its
// namespace per topology domain; DoNotSchedule constraints filter (the
// domain's count plus the pod, less the global minimum, at most maxSkew),
// ScheduleAnyway constraints score (fewer matching pods, higher score). A
// pod without constraints of its own gets upstream's system defaults
// (ScheduleAnyway, hostname maxSkew 3, zone maxSkew 5) when a Service,
// ReplicationController, ReplicaSet or StatefulSet selects or owns it,
// with their selectors.
//
// It owns the counting over the snapshot; it must not keep state across
// cycles or touch the apiserver (it reads the scheduler's listers).
package podtopologyspread
