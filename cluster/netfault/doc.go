// Package netfault is kstep's link proxy: the one forwarder that stands in
// front of every link a chaos fault can name (etcd peer ↔ peer, apiserver →
// etcd, every actor → the apiservers) and does to its bytes what the fault
// says: delay (fixed + jitter), loss, blackhole, bandwidth, or a cut (a
// partition), per direction, for a duration.
//
// A Proxy runs inside the actor on the receiving end of its link (`kstep
// etcd` for the peer and client links, `kstep apiserver` for the links into
// it), so it lives exactly as long as that actor on every provider, needs no
// network namespace, root or tc, and is the same code on processes and in
// containers. Its control is HTTP (Links, at ControlPath on the actor's own
// port): GET lists every link's rules, PUT replaces one link's. A rule with a
// duration lifts itself when it runs out, so a fault never outlives a chaos
// engine that died mid-run.
//
// TCP has no lost packets to show a client, so loss is defined on what a
// client would see of them: each chunk of bytes is held back one
// retransmission timeout (RetransmitDelay, Linux's minimum RTO) with the
// rule's loss probability, holding the stream behind it as TCP's in-order
// delivery would; a separate reset share resets connections (open ones when
// the rule is set, new ones as they arrive). A blackhole forwards nothing
// and holds what arrives (the sender blocks once the buffers fill, as it
// would on a link that drops every segment), and delivers it when the rule
// lifts, as retransmission would.
//
// The links' names (links.go: LinkEtcdPeer, LinkEtcdClient, LinkAPIServer)
// live here, with the mechanism, so that the actors that host a link and
// the chaos engine that faults it share them without importing each other.
//
// The package knows bytes, connections, senders and the links' names; it
// must not know etcd, HTTP APIs beyond its own control, or what an actor
// is. Who a connection's
// sender is (an etcd member, from its first request) is the caller's
// Identify function; on a link that terminates TLS (ListenTLS: etcd's
// peer URLs behind certificates) the caller's Senders.Conn names it from
// the certificate it presented, and the link dials its target over TLS
// again.
package netfault
