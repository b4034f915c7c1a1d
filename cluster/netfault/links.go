package netfault

// The links kstep's actors run a Proxy on, by name: the names a chaos
// fault's link names and a link control's URLs carry. The names are all
// this package knows of them; the actors that host them decide where each
// stands.
//
//   - LinkEtcdPeer, in front of an etcd member's peer listener: the member
//     advertises the proxy's address, so every raft message into it
//     crosses the link, and the link knows which member sent each
//     connection. Cutting member M off its peers is a cut on M's own link
//     (nothing gets into M) and a cut From M on every other member's
//     (nothing M sends gets in): a member's raft traffic flows over
//     connections either side dials.
//   - LinkEtcdClient, in front of an etcd member's client listener: the
//     apiservers' --etcd-servers point at it, so a fault on it is a fault
//     on apiserver → etcd.
//   - LinkAPIServer, in front of an apiserver: every actor's connection
//     to it.
const (
	LinkEtcdPeer   = "etcd-peer"
	LinkEtcdClient = "etcd-client"
	LinkAPIServer  = "apiserver"
)
