package process

import "time"

// nodeStopGrace is how long a node actor gets between SIGTERM and SIGKILL:
// its kubelet's stop, every pod's removal and containerd's stop, each
// bounded inside `kstep node`.
const nodeStopGrace = 45 * time.Second
