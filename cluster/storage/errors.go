package storage

import (
	"errors"

	"github.com/kstep-dev/kstep/cluster/etcdadmin"
)

// Sentinel errors. Every error returned by this package that means one of
// these wraps it, so callers test with errors.Is and map to API status codes.
var (
	// ErrNotFound: the key does not exist (at the revision asked).
	ErrNotFound = errors.New("not found")
	// ErrExists: a create found the key already present.
	ErrExists = errors.New("already exists")
	// ErrSideExists: a key CreateWith was to write beside the object (a
	// Service's cluster IP) is held already; nothing was written.
	ErrSideExists = errors.New("a key written beside the object exists")
	// ErrConflict: the key's mod revision is not the one the caller read.
	ErrConflict = errors.New("conflict: the object has been modified")
	// ErrCompacted: the revision asked for has been compacted away.
	ErrCompacted = errors.New("revision compacted")
	// ErrTooLarge: a revision asked for is newer than the store reached in time.
	ErrTooLarge = errors.New("resource version too large")
	// ErrNoSpace: etcd refused a write because its space quota is full
	// (etcdadmin.ErrNoSpace, the same error: etcdadmin.Recover brings the
	// writes back).
	ErrNoSpace = etcdadmin.ErrNoSpace
)
