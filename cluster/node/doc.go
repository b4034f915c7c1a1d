// Package node runs one real node on this host: containerd (with its CRI
// plugin, the runc shim, runc and the CNI plugins, all built by make
// node-bins) under a supervisor, and the node's kubelet beside it. It is
// what `kstep node` runs.
//
// It owns the node's directory (Layout) and what goes in it:
//
//	<dir>/containerd.toml     containerd's configuration (version 3), rewritten at every start
//	<dir>/root, <dir>/state   containerd's root (images, snapshots) and state (task sockets, netns)
//	<dir>/containerd.sock     the CRI endpoint (unix://<dir>/containerd.sock), ttrpc beside it
//	<dir>/cni/net.d           the pod network: bridge kstep<index> with host-local IPAM on
//	                          10.88.<index>.0/24 (gateway .1, masquerade), portmap
//	<dir>/cni/networks        host-local's address allocations
//	<dir>/certs.d             registry.kstep.local -> http://<registry> (pull, resolve)
//	<dir>/containerd.log      containerd's output
//	<dir>/kubelet, <dir>/pods the kubelet's --root-dir and --pod-logs-dir
//
// Configuration that must differ between the nodes of one host (root,
// state, sockets, bridge, subnet, IPAM data) comes from the node's
// directory and index; nodes on one host need distinct ones. Two settings
// are required on kstep's machines: restrict_oom_score_adj (CAP_SYS_RESOURCE
// is missing even for root, and without it every RunPodSandbox fails), and a
// runc built with seccomp (make node-bins). The snapshotter is overlayfs
// where an overlay mounts under <dir>, native where not.
//
// Containerd runs loopback (a CNI plugin in the bin directory) for every
// pod itself, so the conflist holds only bridge and portmap.
//
// Supervision: containerd or the kubelet that exits is started again (and
// the restart logged), first after 100 ms, backing off while it keeps
// crashing. Stop stops the kubelet, then containerd; containers keep
// running, because containerd's shims outlive it, as upstream.
//
// It must not talk to the apiserver or know what pods should run: that is
// the kubelet's (cluster/kubelet), which this package only starts, by the
// kstep binary's command line. It talks to containerd only to see that its
// CRI answers. It must not import cluster/images: images are names to it.
package node
