// Package etcd runs one etcd member in the current process through
// go.etcd.io/etcd/server/v3/embed.
//
// It owns the mapping from kstep's member Config to etcd's embed.Config, the
// member's lifecycle (start, wait for readiness, close on context
// cancellation) and the defaults kstep runs etcd with (quiet logs, watch
// progress notifications for the apiserver's watch cache).
//
// It does not own cluster topology: which members exist, their ports, data
// directories and processes belong to the providers (cluster/provider/...).
// It is not an etcd client: only the apiserver (cluster/storage) talks to etcd,
// and nothing here may read or write keys.
package etcd
