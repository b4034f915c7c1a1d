package etcd

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/kstep-dev/kstep/cluster/etcdadmin"
)

// Initial cluster states, as etcd's --initial-cluster-state spells them.
const (
	ClusterStateNew      = embed.ClusterStateFlagNew
	ClusterStateExisting = embed.ClusterStateFlagExisting
)

// Config describes one etcd member. Field names follow etcd's own flags; the
// zero value is not usable, start from DefaultConfig.
type Config struct {
	// Name is the member's name; it must appear in InitialCluster.
	Name string
	// DataDir holds the member's WAL and snapshots.
	DataDir string

	// ListenClientURLs are the URLs the member serves clients on.
	ListenClientURLs []string
	// AdvertiseClientURLs are the client URLs the member tells others about.
	AdvertiseClientURLs []string
	// ListenPeerURLs are the URLs the member serves Raft peers on.
	ListenPeerURLs []string
	// AdvertisePeerURLs are the peer URLs the member tells others about
	// (etcd's --initial-advertise-peer-urls).
	AdvertisePeerURLs []string

	// InitialCluster is "name=peerURL,name=peerURL,...". It is read only when
	// the data directory is empty; a member that has data keeps its membership.
	InitialCluster string
	// InitialClusterState is ClusterStateNew or ClusterStateExisting.
	InitialClusterState string
	// InitialClusterToken keeps members of different clusters from joining
	// each other by accident.
	InitialClusterToken string

	// HeartbeatInterval is the Raft heartbeat (etcd's --heartbeat-interval).
	// etcd works in whole milliseconds.
	HeartbeatInterval time.Duration
	// ElectionTimeout is the Raft election timeout (--election-timeout); etcd
	// requires at least five heartbeat intervals.
	ElectionTimeout time.Duration
	// SnapshotCount is the number of committed entries between snapshots.
	SnapshotCount uint64
	// QuotaBackendBytes is the backend size alarm; 0 means etcd's default (2 GiB).
	QuotaBackendBytes int64
	// AutoCompactionMode is "periodic" or "revision".
	AutoCompactionMode string
	// AutoCompactionRetention is a duration ("1h", or hours as a bare number)
	// in periodic mode and a revision count in revision mode; "0" disables
	// auto-compaction (the apiserver may compact instead).
	AutoCompactionRetention string
	// MaxRequestBytes is the largest client request etcd accepts.
	MaxRequestBytes uint
	// WatchProgressNotifyInterval is how often idle watches get a progress
	// notification. The apiserver's watch cache relies on them to know how
	// current it is; 0 disables them.
	WatchProgressNotifyInterval time.Duration

	// LogLevel is zap's level: debug, info, warn, error.
	LogLevel string
	// EnablePprof serves Go's /debug/pprof on the client URLs, as every
	// other actor serves it on its metrics address: the members' CPU is
	// the cluster's largest share, and is profiled like the rest.
	EnablePprof bool

	// PeerProxyListen, when set, runs the netfault.LinkEtcdPeer link proxy on this
	// address (the member's advertised peer address) in front of
	// ListenPeerURLs[0]; ClientProxyListen the netfault.LinkEtcdClient link in front of
	// ListenClientURLs[0] (where the apiservers are pointed). Their control
	// is at netfault.ControlPath on the client URLs (links.go).
	PeerProxyListen   string
	ClientProxyListen string
	// ClientTLS secures the client URLs (https), PeerTLS the peer URLs:
	// etcd's --cert-file, --key-file, --trusted-ca-file and
	// --client-cert-auth, and their --peer- twins. Zero: plain http.
	ClientTLS, PeerTLS TLS
	// ListenMetricsURLs serve /metrics and /health only, plain (etcd's
	// --listen-metrics-urls): what monitoring reads, with no key access.
	ListenMetricsURLs []string
	// LinkControlCN is the client certificate CommonName the link control
	// (netfault.ControlPath on the client URLs) answers when the client
	// URLs require certificates; every other client is refused 403, the
	// apiservers' included. A member with links on a TLS client URL must
	// name it.
	LinkControlCN string
}

// TLS is one of a member's listeners' TLS, etcd's transport.TLSInfo as its
// flags set it. The member's certificate must be valid for the hosts it is
// reached by; with ClientCertAuth only clients whose certificate
// TrustedCAFile signed get through the handshake.
type TLS struct {
	CertFile, KeyFile, TrustedCAFile string
	ClientCertAuth                   bool
}

// Empty says the listener is plain.
func (t TLS) Empty() bool { return t.CertFile == "" && t.KeyFile == "" }

func (t TLS) info() transport.TLSInfo {
	return transport.TLSInfo{CertFile: t.CertFile, KeyFile: t.KeyFile, TrustedCAFile: t.TrustedCAFile, ClientCertAuth: t.ClientCertAuth}
}

// DefaultConfig returns a single-member configuration on etcd's default ports
// with kstep's defaults: etcd's own Raft and storage defaults, warn-level logs
// and one-second watch progress notifications.
func DefaultConfig() Config {
	d := embed.NewConfig()
	return Config{
		Name:                        "default",
		DataDir:                     "default.etcd",
		ListenClientURLs:            []string{embed.DefaultListenClientURLs},
		AdvertiseClientURLs:         []string{embed.DefaultAdvertiseClientURLs},
		ListenPeerURLs:              []string{embed.DefaultListenPeerURLs},
		AdvertisePeerURLs:           []string{embed.DefaultInitialAdvertisePeerURLs},
		InitialCluster:              "default=" + embed.DefaultInitialAdvertisePeerURLs,
		InitialClusterState:         ClusterStateNew,
		InitialClusterToken:         "kstep",
		HeartbeatInterval:           time.Duration(d.TickMs) * time.Millisecond,
		ElectionTimeout:             time.Duration(d.ElectionMs) * time.Millisecond,
		SnapshotCount:               d.SnapshotCount,
		QuotaBackendBytes:           d.QuotaBackendBytes,
		AutoCompactionMode:          d.AutoCompactionMode,
		AutoCompactionRetention:     d.AutoCompactionRetention,
		MaxRequestBytes:             d.MaxRequestBytes,
		WatchProgressNotifyInterval: time.Second,
		LogLevel:                    "warn",
		EnablePprof:                 true,
	}
}

// embedConfig maps c onto etcd's configuration and validates the result with
// etcd's own rules, so flag errors read the way etcd users expect.
func (c Config) embedConfig() (*embed.Config, error) {
	if c.Name == "" {
		return nil, errors.New("member name is empty")
	}
	if c.DataDir == "" {
		return nil, fmt.Errorf("member %q: data dir is empty", c.Name)
	}
	if err := etcdadmin.ValidateTiming("--heartbeat-interval", "--election-timeout", c.HeartbeatInterval, c.ElectionTimeout); err != nil {
		return nil, fmt.Errorf("member %q: %w", c.Name, err)
	}

	ec := embed.NewConfig()
	ec.Name = c.Name
	ec.Dir = c.DataDir
	var err error
	if ec.ListenClientUrls, err = parseURLs("listen-client-urls", c.ListenClientURLs); err != nil {
		return nil, fmt.Errorf("member %q: %w", c.Name, err)
	}
	if ec.AdvertiseClientUrls, err = parseURLs("advertise-client-urls", c.AdvertiseClientURLs); err != nil {
		return nil, fmt.Errorf("member %q: %w", c.Name, err)
	}
	if ec.ListenPeerUrls, err = parseURLs("listen-peer-urls", c.ListenPeerURLs); err != nil {
		return nil, fmt.Errorf("member %q: %w", c.Name, err)
	}
	if ec.AdvertisePeerUrls, err = parseURLs("initial-advertise-peer-urls", c.AdvertisePeerURLs); err != nil {
		return nil, fmt.Errorf("member %q: %w", c.Name, err)
	}
	if len(c.ListenMetricsURLs) > 0 {
		if ec.ListenMetricsUrls, err = parseURLs("listen-metrics-urls", c.ListenMetricsURLs); err != nil {
			return nil, fmt.Errorf("member %q: %w", c.Name, err)
		}
	}
	for _, l := range []struct {
		flag string
		t    TLS
		urls []url.URL
	}{{"", c.ClientTLS, ec.ListenClientUrls}, {"peer-", c.PeerTLS, ec.ListenPeerUrls}} {
		if l.t.Empty() {
			continue
		}
		if l.t.CertFile == "" || l.t.KeyFile == "" {
			return nil, fmt.Errorf("member %q: --%scert-file and --%skey-file go together", c.Name, l.flag, l.flag)
		}
		if l.t.ClientCertAuth && l.t.TrustedCAFile == "" {
			return nil, fmt.Errorf("member %q: --%sclient-cert-auth needs --%strusted-ca-file", c.Name, l.flag, l.flag)
		}
		for _, u := range l.urls {
			if u.Scheme != "https" {
				return nil, fmt.Errorf("member %q: %s is not https, but --%scert-file is set", c.Name, u.String(), l.flag)
			}
		}
	}
	ec.ClientTLSInfo = c.ClientTLS.info()
	ec.PeerTLSInfo = c.PeerTLS.info()
	if c.ClientProxyListen != "" || c.PeerProxyListen != "" {
		if !c.ClientTLS.Empty() && (!c.ClientTLS.ClientCertAuth || c.LinkControlCN == "") {
			return nil, fmt.Errorf("member %q: links on a TLS client URL need --client-cert-auth and --link-control-cn (who may control them)", c.Name)
		}
	}
	ec.InitialCluster = c.InitialCluster
	ec.ClusterState = c.InitialClusterState
	if c.InitialClusterToken != "" {
		ec.InitialClusterToken = c.InitialClusterToken
	}
	ec.TickMs = uint(c.HeartbeatInterval / time.Millisecond)
	ec.ElectionMs = uint(c.ElectionTimeout / time.Millisecond)
	ec.SnapshotCount = c.SnapshotCount
	ec.QuotaBackendBytes = c.QuotaBackendBytes
	ec.AutoCompactionMode = c.AutoCompactionMode
	ec.AutoCompactionRetention = c.AutoCompactionRetention
	if c.MaxRequestBytes != 0 {
		ec.MaxRequestBytes = c.MaxRequestBytes
	}
	ec.WatchProgressNotifyInterval = c.WatchProgressNotifyInterval
	ec.EnablePprof = c.EnablePprof
	if c.LogLevel != "" {
		// etcd panics on a level it does not know; refuse it with a message.
		switch c.LogLevel {
		case "debug", "info", "warn", "error", "dpanic", "panic", "fatal":
		default:
			return nil, fmt.Errorf("member %q: --log-level %q: want debug, info, warn, error, panic or fatal", c.Name, c.LogLevel)
		}
		ec.LogLevel = c.LogLevel
	}
	if c.PeerProxyListen != "" && len(ec.ListenPeerUrls) != 1 {
		return nil, fmt.Errorf("member %q: --peer-proxy-listen needs exactly one --listen-peer-urls", c.Name)
	}
	if c.ClientProxyListen != "" && len(ec.ListenClientUrls) != 1 {
		return nil, fmt.Errorf("member %q: --client-proxy-listen needs exactly one --listen-client-urls", c.Name)
	}
	// Validate also builds the zap logger from LogLevel; StartEtcd would run
	// it too, but failing here names the member in the error.
	if err := ec.Validate(); err != nil {
		return nil, fmt.Errorf("member %q: invalid etcd configuration: %w", c.Name, err)
	}
	return ec, nil
}

func parseURLs(flag string, raw []string) ([]url.URL, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("--%s is empty", flag)
	}
	out := make([]url.URL, 0, len(raw))
	for _, s := range raw {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("--%s: %w", flag, err)
		}
		if u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("--%s: %q is not scheme://host:port", flag, s)
		}
		out = append(out, *u)
	}
	return out, nil
}
