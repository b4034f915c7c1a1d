// Package storage is the apiservers' way to etcd: the only code in kstep
// that reads or writes the keys objects are stored at. Others talk to etcd
// for what etcd itself is, never for objects: the member
// (cluster/etcd), the space and its NOSPACE recovery (cluster/etcdadmin,
// which `kstep etcd recover` and the chaos engine run) and the chaos
// engine's reads of the members' status, hashes and history
// (chaos/etcd.go).
//
// It owns:
//
//   - Store: the key/value operations the apiserver needs, each a single etcd
//     request or transaction. resourceVersion IS etcd's mod revision: a create
//     is a transaction on the key's absence, an update or delete is a
//     transaction on the mod revision the caller read, so a stale writer gets
//     ErrConflict and nothing is written (optimistic concurrency, no locks).
//     CreateWith, UpdateWith and Delete write an object's side keys (a
//     Service's cluster IP: taken on create or on an update that needs
//     one, given up on delete or on an update that holds it no more) in
//     the object's own transaction: all or nothing, one Raft commit.
//     A request etcd leaves unanswered (a dead or cut-off leader) is sent
//     again within its Retry bounds (retry.go), its first attempt still
//     awaited beside the resends (a slow etcd answers it); a retried write
//     whose precondition failed is recognised as its own or answered
//     ErrOutcomeUnknown (an ErrUnavailable), never ErrConflict. Each
//     attempt runs on a worker of internal/util/gopool (the gRPC call's deep
//     stack is already grown there).
//   - Writes to the leader (leader.go): with RouteWritesToLeader, a write's
//     first attempt goes to the etcd member that leads, through a client of
//     its own, found again when an answer's Raft term, a resend or the
//     connection says the leader may have changed; resends and reads
//     balance over every member.
//   - Cacher: the watch cache of one resource. ONE etcd watch per resource
//     prefix, decoded once, kept as the current state plus a ring of recent
//     events, and fanned out to every watcher of that resource. Thousands of
//     watchers cost one etcd watch; each watcher's queue grows with a
//     burst (up to CacherConfig.WatcherBuffer) and is let go once
//     drained. Each version is encoded for the wire
//     at most once per form (Entry.JSON, Entry.Protobuf: the Codec's, made
//     when a list or watcher first asks) and shared by every reader. The
//     ring is bounded by events and by the stored bytes they carry
//     (CacherConfig.CapacityBytes). Only versions the newest
//     CacherConfig.DecodedEvents events concern, and no more of them than
//     CacherConfig.DecodedBytes of stored bytes, stay decoded and encoded;
//     older ones are compacted to one byte form (their protobuf wire form
//     if it was made, else their stored value), held S2-compressed with a
//     dictionary of the resource's first compacted versions
//     (CacherConfig.DictBytes), and decoded again by whoever needs the
//     object (Entry.Object, Entry.ObjectCopy). An Observe
//     hook, opaque to storage, sees each change before any watcher does
//     (the apiserver stamps the step tracer there).
//   - EtcdWatcher (etcdwatch.go): a watch served straight from etcd, for a
//     resource with no watch cache (Events): one etcd watch per client
//     watch, with the Cacher's contract (Stream is what both offer).
//   - Keys on leases and change notices (lease.go): KeepKey holds a key on
//     an etcd lease for as long as its caller lives (the apiservers'
//     endpoint leases), Changes says when a prefix changed.
//   - Compaction (compact.go): upstream's compactor, every apiserver
//     running it and a transaction on CompactRevKey letting one of them
//     compact each interval, to the revision of one interval earlier; the
//     compacting apiserver then defragments members whose file is mostly
//     unused.
//   - etcd's space (space.go): the store's view of cluster/etcdadmin's
//     (each member's file and in-use size, the NOSPACE alarms; the
//     recovery is etcdadmin.Recover, which `kstep etcd recover` and the
//     chaos engine run). A write refused for the space quota is ErrNoSpace
//     (etcdadmin's), settled by reading back first, since etcd applies the
//     write that crosses the quota and answers it NOSPACE all the same.
//
// Storage knows keys, bytes, revisions and opaque decoded objects. It must not
// know HTTP, Kubernetes API semantics (defaulting, validation, subresources),
// or any actor other than the apiserver: controllers, schedulers and kubelets
// never import it.
package storage
