// Package etcdadmin is what kstep does to a running etcd cluster from
// outside it, over its client API, and the rules a member's timing is
// checked by: the pieces the etcd member (cluster/etcd), the apiservers'
// storage (cluster/storage), the providers, `kstep etcd recover` and the
// chaos engine share, so that none of them imports another for them.
//
// It owns:
//
//   - etcd's space (space.go): each member's file and in-use size
//     (MemberSpace, Space), the NOSPACE alarms, ErrNoSpace (the refusal of
//     a write for the space quota, in etcd's own words) and Recover (compact
//     everything, defragment each member in turn, disarm: etcd's documented
//     procedure).
//   - The Raft timing rules (timing.go): etcd's default heartbeat interval
//     and election timeout, and ValidateTiming, the bounds etcd enforces.
//
// It must not run a member (cluster/etcd does), know keys or objects
// (cluster/storage does), or know who calls it; it imports no kstep
// package.
package etcdadmin
