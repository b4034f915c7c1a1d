package etcd

import (
	"testing"

	"github.com/kstep-dev/kstep/cluster/etcdadmin"
)

// The timing defaults the providers check a topology with (etcdadmin's,
// which must not import this package) are the ones a member runs with:
// etcd's own.
func TestDefaultTimingIsEtcdadmins(t *testing.T) {
	d := DefaultConfig()
	if d.HeartbeatInterval != etcdadmin.DefaultHeartbeatInterval || d.ElectionTimeout != etcdadmin.DefaultElectionTimeout {
		t.Errorf("a member's defaults are heartbeat %v, election %v; etcdadmin says %v, %v",
			d.HeartbeatInterval, d.ElectionTimeout, etcdadmin.DefaultHeartbeatInterval, etcdadmin.DefaultElectionTimeout)
	}
}
