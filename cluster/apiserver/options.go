package apiserver

import "time"

// Options configures one apiserver process. The zero value is not usable;
// start from DefaultOptions.
type Options struct {
	// Name identifies this apiserver in logs, metrics and step events.
	Name string
	// Listen is the host:port the HTTP server binds.
	Listen string
	// EtcdServers are the client URLs of the etcd members.
	EtcdServers []string
	// EtcdDialTimeout bounds the first connection to etcd.
	EtcdDialTimeout time.Duration
	// MaxRequestBytes is the largest request body accepted; larger bodies get
	// 413 before anything reaches etcd. etcd refuses requests over 1.5 MiB by
	// default, so the apiserver refuses them first.
	MaxRequestBytes int64
	// WatchCacheSize is the number of recent events each resource's watch
	// cache keeps for watches that resume from an older resourceVersion.
	WatchCacheSize int
	// BookmarkInterval is how often watchers that asked for bookmarks get one.
	BookmarkInterval time.Duration
	// TraceFile, when set, receives this apiserver's step events
	// (rs.received, rs.persisted, pod.persisted) as JSON lines.
	TraceFile string
	// WatchFlushInterval bounds how often a busy watch stream is flushed to
	// its connection; an idle stream is flushed at once. It trades at most
	// this much delivery latency under load for far fewer syscalls.
	WatchFlushInterval time.Duration
}

// DefaultOptions returns the options a single-host cluster runs with.
func DefaultOptions() Options {
	return Options{
		Name:             "apiserver-0",
		Listen:           "127.0.0.1:6443",
		EtcdServers:      []string{"http://127.0.0.1:2379"},
		EtcdDialTimeout:  5 * time.Second,
		MaxRequestBytes:  3 << 19, // 1.5 MiB
		WatchCacheSize:   16384,
		BookmarkInterval: 5 * time.Second,
		// Measured with make bench-api (BenchmarkWatchFanout).
		WatchFlushInterval: 10 * time.Millisecond,
	}
}
