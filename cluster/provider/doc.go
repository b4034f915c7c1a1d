// Package provider is where a kstep cluster is described and how it is run,
// for every provider alike.
//
// It owns the one cluster model:
//
//   - Topology (topology.go): the cluster's shape — etcd members,
//     apiservers, controller-managers, schedulers, RealNodes, HollowNodes,
//     etcd tuning, security on or off, link proxies on or off, extra flags
//     per actor kind. kstep up's flags, bench profiles, chaos scenarios
//     and run.json all carry it under the same keys; the old keys "nodes"
//     and "etcdPeerProxies" are refused with the new names.
//   - Plan (plan.go): Plan(Topology, Addressing) []Component, pure: every
//     actor with its argv, ports, data directory, identity, kubeconfig and
//     readiness check. A provider supplies only Addressing (which ports
//     components bind, which host names reach them, where their data lives).
//   - Boot and Shutdown (lifecycle.go): the boot order and the shutdown
//     order, written once. Providers pass how to start a group and how to
//     stop one.
//   - What every provider writes the same way: the PKI and token files
//     (pki.go; etcd's own PKI under pki/etcd, and EtcdAdminTLS, the
//     operator certificate chaos and link control reach etcd with), the
//     kubeconfigs (kubeconfig.go), the readiness wait
//     (ready.go), free loopback ports (ports.go), partitions of etcd
//     peers through the link proxies that run inside the members
//     (partition.go: rules on cluster/etcd's etcd-peer link, over
//     cluster/netfault's control), and supervision (supervise.go:
//     Restart=always with a doubling backoff over the Provider interface,
//     which kstep supervise, the foreground kstep up and the chaos engine
//     run).
//   - The Provider contract (provider.go) and the registry (registry.go):
//     implementations register by name (process, docker, external) from
//     their init (external is a cluster kstep does not run: it starts no
//     actor and refuses actor-level faults with ErrUnsupported);
//     New, Resolve (auto: docker when a daemon answers, else process) and
//     Open (the provider that recorded a state directory) are how the
//     harness and kstep's commands reach them. bench and chaos import this
//     package and no implementation.
//
// RunLabel (registry.go) is the label everything a run creates on an
// external cluster carries, and what the external provider and `kstep
// clean` remove by.
//
// It must not import an implementation (provider/process, provider/docker,
// provider/external) or the actors' packages: the etcd timing rules a
// Topology is checked by are cluster/etcdadmin's and the links' names
// cluster/netfault's; its contract with the actors is the kstep command
// line that Plan writes and their health endpoints.
package provider
