// Package process is the provider that runs every actor of a cluster as a
// child process of the kstep binary on 127.0.0.1 ports: `kstep etcd` for each
// etcd member, `kstep apiserver` for each apiserver.
//
// It owns the state directory of a cluster:
//
//	<state>/cluster.json     actors, PIDs, argv, ports: how another kstep
//	                         process (kstep down, the chaos engine) finds them
//	<state>/kubeconfig       one context per apiserver ("kstep" is apiserver-0),
//	                         as the admin (kubernetes-admin, system:masters)
//	<state>/kubeconfigs/     each apiserver client's own kubeconfig and identity
//	<state>/pki/             the cluster's CA, the apiservers' serving
//	                         certificate and token files (certs.go); none with
//	                         Config.Insecure
//	<state>/etcd/<member>/   each member's data directory
//	<state>/nodes/<node>/    each real node's data (containerd's root and
//	                         state); Purge removes it once nothing is
//	                         mounted in it
//	<state>/logs/<actor>.log each actor's stdout and stderr
//	<state>/traces/          each actor's step events when Spec.TraceDir is
//	                         there (kstep up --profile puts them there);
//	                         Purge removes it with the rest
//
// It materialises provider.Plan as child processes: every port a free one
// of 127.0.0.1 (plan in provider.go), started in provider.Boot's order and
// stopped in provider.Shutdown's. It owns process start/stop/signalling
// (Signal finds a process inside an actor, a node's containerd or kubelet,
// in /proc), reaping: a real node SIGKILLed takes its pods with it (their
// shims outlive `kstep node` by design, so Stop kills them, as every
// process of a killed node container dies), and what Down leaves.
//
// It must not import the actors' packages (cluster/etcd, cluster/apiserver):
// its contract with them is the command line of the kstep binary. It must not
// talk to etcd or the apiserver beyond their health endpoints.
//
// With Topology.LinkProxies, each etcd member runs its links (kstep etcd
// --peer-proxy-listen, --client-proxy-listen) and each apiserver its own
// (--link-listen), and Partition/Heal cut and restore a member's peer
// traffic through them (provider.SetPeerCut); the links live as long as
// the actors, so a detached cluster keeps them. Without
// them, for other actors, and for a whole actor off the network (every
// actor shares the loopback), Partition is ErrUnsupported.
//
// Up always creates a new cluster: etcd data left in the state directory by an
// earlier cluster is deleted, because that cluster's members were bound to
// other ports.
package process
