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
//	<state>/logs/<actor>.log each actor's stdout and stderr
//
// It owns port selection, process start/stop/signalling, readiness waits
// (etcd's /health, the apiserver's /readyz), the kubeconfigs and the
// identities in them (through cluster/pki, which issues certificates and
// knows nothing of apiservers).
//
// It must not import the actors' packages (cluster/etcd, cluster/apiserver):
// its contract with them is the command line of the kstep binary. It must not
// talk to etcd or the apiserver beyond their health endpoints.
//
// With Config.EtcdPeerProxy, each etcd member advertises a proxy (in the
// process that ran Up) in front of its peer port, and Partition/Heal cut and
// restore a member's peer traffic (peerproxy.go); without it, and for other
// actors, Partition is ErrUnsupported.
//
// Up always creates a new cluster: etcd data left in the state directory by an
// earlier cluster is deleted, because that cluster's members were bound to
// other ports.
package process
