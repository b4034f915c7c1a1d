package etcdadmin

import (
	"fmt"
	"time"
)

// etcd's own defaults (embed.NewConfig's TickMs and ElectionMs; a test in
// cluster/etcd holds them equal): what a member runs with when its
// configuration leaves them out.
const (
	DefaultHeartbeatInterval = 100 * time.Millisecond
	DefaultElectionTimeout   = 1000 * time.Millisecond
)

// maxElectionTimeout is etcd's upper bound on the election timeout.
const maxElectionTimeout = 50 * time.Second

// ValidateTiming checks a Raft heartbeat interval and election timeout by
// etcd's rules (an election timeout of at least five heartbeats, at most
// 50 s) and that both are whole positive milliseconds, as etcd's flags
// take them. hbName and elName are what the error calls the two: flag
// names here, a profile's YAML keys in the harness.
func ValidateTiming(hbName, elName string, hb, el time.Duration) error {
	switch {
	case hb <= 0 || el <= 0:
		return fmt.Errorf("%s %v and %s %v must be positive", hbName, hb, elName, el)
	case hb%time.Millisecond != 0 || el%time.Millisecond != 0:
		return fmt.Errorf("%s %v and %s %v must be whole milliseconds", hbName, hb, elName, el)
	case el < 5*hb:
		return fmt.Errorf("%s %v is less than 5 × %s %v (etcd refuses it)", elName, el, hbName, hb)
	case el > maxElectionTimeout:
		return fmt.Errorf("%s %v is above etcd's limit of %v", elName, el, maxElectionTimeout)
	}
	return nil
}
