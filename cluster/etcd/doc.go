// Package etcd runs one etcd member in the current process through
// go.etcd.io/etcd/server/v3/embed.
//
// It owns the mapping from kstep's member Config to etcd's embed.Config, the
// member's lifecycle (start, wait for readiness, close on context
// cancellation) and the defaults kstep runs etcd with (quiet logs, watch
// progress notifications for the apiserver's watch cache), and the
// member's optional links (links.go): cluster/netfault proxies in front of
// its peer listener and its client listener, inside the member's own
// process, whose rules (controlled over HTTP at netfault.ControlPath on the
// client URLs) partition members from each other and delay, lose or
// blackhole etcd's peer and client traffic on every provider without root
// or network namespaces. Which connection a peer sent is etcd's knowledge
// (X-PeerURLs on plain peer URLs; on TLS ones the link terminates the
// peers' TLS and names each by its certificate), so it lives here. A
// member may serve its client and peer URLs over TLS with client
// certificates required (Config.ClientTLS, PeerTLS: etcd's own flags),
// its metrics on a plain metrics URL, and its link control then only to
// one certificate name (Config.LinkControlCN).
//
// It does not own cluster topology: which members exist, their ports, data
// directories and processes belong to cluster/provider (the plan) and its
// implementations.
// It is not an etcd client: nothing here may read or write keys (the
// apiservers do, through cluster/storage). What is done to a running
// cluster from outside it (its space, the NOSPACE recovery) and the timing
// rules a topology is checked by are cluster/etcdadmin's, which a member's
// Config uses too (etcdadmin.ValidateTiming); the links' names are
// cluster/netfault's.
package etcd
