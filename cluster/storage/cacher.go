package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/prometheus/client_golang/prometheus"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Codec is what the watch cache needs to know about the objects of one
// resource. The apiserver supplies it; storage never looks inside objects.
type Codec interface {
	// Decode turns a stored value into an object whose resourceVersion is rev.
	Decode(key string, value []byte, rev int64) (runtime.Object, error)
	// DecodeProtobuf turns a bare message EncodeProtobuf made back into an
	// object whose resourceVersion is rev.
	DecodeProtobuf(msg []byte, rev int64) (runtime.Object, error)
	// Encode renders an object in the JSON wire form clients get.
	Encode(obj runtime.Object) ([]byte, error)
	// EncodeProtobuf renders an object as its bare protobuf message: the
	// bytes protobuf clients get once the apiserver has framed them (in an
	// envelope, a watch event, or a list's items). Storage never looks
	// inside either form.
	EncodeProtobuf(obj runtime.Object) ([]byte, error)
	// Bookmark returns the object of a BOOKMARK event at rev.
	Bookmark(rev int64, initialEventsEnd bool) runtime.Object
	// Attrs returns what selectors match against.
	Attrs(obj runtime.Object) Attrs
}

// Attrs are an object's selectable attributes, computed once per version.
type Attrs struct {
	Namespace string
	Labels    Pairs
	Fields    Pairs
}

// Filter selects objects for a list or a watch. Zero values select all.
type Filter struct {
	Namespace string
	Label     labels.Selector
	Field     fields.Selector
}

func (f *Filter) matches(e *Entry) bool {
	return e != nil && f.Matches(e.Attrs)
}

// Matches reports whether an object with attributes a passes the filter.
func (f *Filter) Matches(a Attrs) bool {
	if f.Namespace != "" && a.Namespace != f.Namespace {
		return false
	}
	if f.Label != nil && !f.Label.Empty() && !f.Label.Matches(a.Labels) {
		return false
	}
	if f.Field != nil && !f.Field.Empty() && !f.Field.Matches(a.Fields) {
		return false
	}
	return true
}

// Entry is one version of one object. Its object is shared by every reader
// and MUST NOT be mutated; copy it first (ObjectCopy).
//
// An entry keeps the bytes it decodes from. While its version is among the
// ring's newest CacherConfig.DecodedEvents events (made, replaced or deleted
// there; fewer when those carry more than CacherConfig.DecodedBytes of
// stored bytes), it also keeps its decoded object and the wire forms readers asked
// for: the watchers of that change, and the writes that follow it, use
// them. Past that it is compacted to one byte form alone, current or
// not: its protobuf wire form when a reader had asked for it (protobuf
// lists and watches of it then still cost a copy), else the value etcd
// stored. A cache of 10,000 pods holds those bytes, not every pod and
// every kept version decoded and encoded; the rarer reader that needs the
// object (a list or watch in JSON, the next write of a quiet object, a
// resumed watch's DELETED) decodes it again for itself.
type Entry struct {
	Key   string
	RV    int64
	Attrs Attrs

	codec Codec
	size  int // the stored value's bytes (the ring's bound counts them)

	mu sync.Mutex
	// src is what the entry decodes from: the value etcd stored, or once
	// compacted (srcProto) its bare protobuf message. nil for a bookmark.
	// A compacted entry's src is S2-compressed with srcDict when that was
	// smaller (srcDict nil: as is).
	src       []byte
	srcDict   *s2.Dict
	srcProto  bool
	compacted bool
	obj       runtime.Object // nil until decoded, and once compacted
	// The wire forms, each made at most once however many lists and
	// watchers ask for it, and only once one asks: an entry no protobuf
	// (or no JSON) client reads never holds those bytes. Pointers (and
	// the two flags side by side), so that the many compacted entries,
	// which hold neither form, take 192 bytes where they took 288.
	json, proto *encoded
}

// encoded is one wire form of an entry, made on first use.
type encoded struct {
	b   []byte
	err error
}

// Object is the entry's object, whose resourceVersion is RV.
func (e *Entry) Object() runtime.Object {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.objectLocked()
}

func (e *Entry) objectLocked() runtime.Object {
	if e.obj != nil {
		return e.obj
	}
	var obj runtime.Object
	src, err := e.source()
	switch {
	case err != nil:
	case e.srcProto:
		obj, err = e.codec.DecodeProtobuf(src, e.RV)
	default:
		obj, err = e.codec.Decode(e.Key, src, e.RV)
	}
	if err != nil {
		// The bytes decoded (or were encoded) once; the codec is
		// deterministic, so this is a broken invariant, not bad input.
		panic(fmt.Sprintf("storage: %s at %d decoded once and not again: %v", e.Key, e.RV, err))
	}
	if !e.compacted {
		e.obj = obj
	}
	return obj
}

// source is the bytes the entry decodes from, decompressed when it is
// compressed (then for the caller alone). Called with mu held.
func (e *Entry) source() ([]byte, error) {
	if e.srcDict == nil {
		return e.src, nil
	}
	return e.srcDict.Decode(nil, e.src)
}

// ObjectCopy is a copy of the entry's object that the caller may mutate.
func (e *Entry) ObjectCopy() runtime.Object {
	e.mu.Lock()
	own := e.obj == nil && e.compacted // decoded for this caller alone
	obj := e.objectLocked()
	e.mu.Unlock()
	if own {
		return obj
	}
	return obj.DeepCopyObject()
}

// JSON returns the entry's JSON wire form (Codec.Encode).
func (e *Entry) JSON() ([]byte, error) { return e.wire(&e.json, e.codec.Encode) }

// Protobuf returns the entry's bare protobuf message (Codec.EncodeProtobuf).
func (e *Entry) Protobuf() ([]byte, error) { return e.wire(&e.proto, e.codec.EncodeProtobuf) }

// wire returns one wire form, made under the entry's lock so that
// concurrent readers of a fresh entry encode it once; a compacted entry's
// form is made for its reader alone and not kept.
func (e *Entry) wire(f **encoded, enc func(runtime.Object) ([]byte, error)) ([]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if *f != nil {
		return (*f).b, (*f).err
	}
	if e.compacted && e.srcProto && f == &e.proto {
		return e.source() // the kept wire form (compressed: a copy)
	}
	b, err := enc(e.objectLocked())
	if !e.compacted {
		*f = &encoded{b: b, err: err}
	}
	return b, err
}

// compact drops what the entry can make again from one byte form: its
// protobuf wire form if a reader made it, else its stored value; with a
// dictionary, that form is kept compressed when that is smaller. It
// returns the form (uncompressed) and the bytes now held when it
// compacted the entry now, nil when there was nothing to compact.
func (e *Entry) compact(dict *s2.Dict) (kept []byte, held int) {
	if e == nil {
		return nil, 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.src == nil || e.compacted {
		return nil, 0 // a bookmark, or done
	}
	e.compacted = true
	e.obj = nil
	e.json = nil
	if e.proto != nil && e.proto.err == nil {
		e.src, e.srcProto, e.srcDict = e.proto.b, true, nil
	}
	e.proto = nil
	if e.srcDict != nil {
		// Held compressed already: a DELETED object made (at) from a
		// version compacted before it.
		return nil, 0
	}
	kept = e.src
	if dict != nil {
		// Encode's answer sits in a buffer of the longest encoding: hold
		// a copy of its length.
		if z := dict.Encode(nil, kept); len(z) < len(kept) {
			e.src, e.srcDict = bytes.Clone(z), dict
		}
	}
	return kept, len(e.src)
}

// event is one change the cache applied: cur is nil for a deletion, prev is
// nil for a creation.
type event struct {
	rv        int64
	cur, prev *Entry
	// gone is prev re-versioned at rv: the object a DELETED event carries,
	// for a deletion and for a watcher whose selection the change leaves
	// (made on first use: see deleted).
	gone atomic.Pointer[Entry]
}

// deleted is the entry a DELETED event for ev carries.
func (ev *event) deleted() *Entry {
	if g := ev.gone.Load(); g != nil {
		return g
	}
	ev.gone.CompareAndSwap(nil, ev.prev.at(ev.rv))
	return ev.gone.Load()
}

// size is what the event pins of stored bytes: the versions it carries.
func (ev *event) size() int64 {
	var n int64
	if ev.cur != nil {
		n += int64(ev.cur.size)
	}
	if ev.prev != nil {
		n += int64(ev.prev.size)
	}
	return n
}

type mvccKV = mvccpb.KeyValue

// Item is what a watcher receives.
type Item struct {
	Type  watch.EventType
	Entry *Entry
}

// CacherConfig configures one resource's watch cache.
type CacherConfig struct {
	// Resource names the cache in logs and metrics ("pods").
	Resource string
	// Prefix is the etcd key prefix, ending in "/".
	Prefix string
	Codec  Codec
	// Capacity is the number of recent events kept for resuming watches;
	// CapacityBytes bounds their stored size too (the values etcd held for
	// the objects each event carries): the oldest go first when either
	// bound is reached, so a run of 1 MiB objects cannot pin
	// Capacity MiB. The newest event always stays.
	Capacity      int
	CapacityBytes int64
	// IndexField, when set, is a field (e.g. "spec.nodeName") that watchers
	// commonly select on exactly; such watchers are found through an index
	// instead of being tested against every event.
	IndexField string
	// WatcherBuffer is the most items a watcher's queue holds (it grows to
	// that only in a burst); a watcher that falls this far behind is
	// terminated and resumes from its last resourceVersion.
	WatcherBuffer int
	// DecodedEvents is how many of the ring's newest events keep the
	// versions they concern decoded, with their wire forms (see Entry):
	// watchers that lag by less never decode a version twice.
	DecodedEvents int
	// DecodedBytes bounds those events by the stored size of the versions
	// they carry too (event.size, as CapacityBytes counts it): the
	// decoded form of a version is a few times its stored bytes, so 2,048
	// updates of an object of 350 KiB (thousands of managers' managed
	// fields) would keep gigabytes decoded; with this bound they keep
	// DecodedBytes' worth, and the newest event always stays decoded.
	DecodedBytes int64
	// DictBytes is how many bytes of the first versions compacted make
	// the resource's S2 dictionary; every later compacted version is kept
	// compressed with it (when that is smaller), at a few microseconds a
	// version to compress and to read (S2 uses at most the last 64 KiB).
	// 0: DefaultDictBytes; negative: compacted versions are kept
	// uncompressed.
	DictBytes int
	// ProgressInterval is how often the cache asks etcd for a progress
	// notification, so its revision advances while its prefix is quiet.
	ProgressInterval time.Duration
	Log              *slog.Logger
	Metrics          *CacheMetrics
	// Observe, when set, sees every change the cache applies from its etcd
	// watch, in revision order, before any watcher is offered it: at is
	// when the watch response arrived, prev is nil for a creation, cur nil
	// for a deletion. It runs under the cache's lock on the fan-out path,
	// so it must be cheap and never block (the apiserver stamps the step
	// tracer here: the earliest moment this apiserver can deliver the
	// change, which causally precedes every watcher's receipt). prev may
	// be compacted: read its Attrs, and its Object only when needed.
	Observe func(at time.Time, prev, cur *Entry)
}

// CacheMetrics are shared by every cacher of one apiserver.
type CacheMetrics struct {
	Watchers    *prometheus.GaugeVec
	Events      *prometheus.CounterVec
	Terminated  *prometheus.CounterVec
	EtcdWatches *prometheus.GaugeVec
	// Bytes is the stored size of the events each ring holds (bounded by
	// CacherConfig.CapacityBytes).
	Bytes *prometheus.GaugeVec
	// Compacted counts the bytes of the versions compacted (the one byte
	// form each keeps), Held what they hold once compressed.
	Compacted, Held *prometheus.CounterVec
}

// NewCacheMetrics registers the watch cache's metrics on reg (may be nil).
func NewCacheMetrics(reg prometheus.Registerer) *CacheMetrics {
	m := &CacheMetrics{
		Watchers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_registered_watchers", Help: "Open watches by resource.",
		}, []string{"resource"}),
		Events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_watch_cache_events_total", Help: "Events the watch cache received from etcd.",
		}, []string{"resource"}),
		Terminated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_terminated_watchers_total", Help: "Watchers closed because they fell behind.",
		}, []string{"resource"}),
		EtcdWatches: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_etcd_watches", Help: "etcd watches open, by resource (one per watch cache).",
		}, []string{"resource"}),
		Bytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "apiserver_watch_cache_bytes", Help: "Stored size of the recent events the watch cache keeps for resuming watches, by resource.",
		}, []string{"resource"}),
		Compacted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kstep_watch_cache_compacted_bytes_total", Help: "Bytes of the versions the watch cache compacted to one byte form, by resource (before compression).",
		}, []string{"resource"}),
		Held: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kstep_watch_cache_compacted_held_bytes_total", Help: "Bytes those compacted versions hold, compressed where that was smaller, by resource.",
		}, []string{"resource"}),
	}
	if reg != nil {
		reg.MustRegister(m.Watchers, m.Events, m.Terminated, m.EtcdWatches, m.Bytes, m.Compacted, m.Held)
	}
	return m
}

// Cacher is the watch cache of one resource. See the package doc.
type Cacher struct {
	cfg   CacherConfig
	store *Store
	codec Codec
	// frozenUntil (unix ns), testing only (Freeze): until then the cache
	// applies nothing and lists do not wait for it to be fresh.
	frozenUntil atomic.Int64

	mu    sync.RWMutex
	items map[string]*Entry
	ring  []*event // circular, cfg.Capacity long
	head  int      // index of the oldest event
	n     int      // events in the ring
	bytes int64    // their stored size (event.size)
	// The newest decodedN events keep their versions decoded;
	// decodedBytes is their stored size.
	decodedN     int
	decodedBytes int64
	// bytesGauge is Metrics.Bytes of this resource, looked up once, as are
	// compacted and held.
	bytesGauge      prometheus.Gauge
	compacted, held prometheus.Counter
	oldest          int64 // a watch may resume from any rv >= oldest
	// dict compresses the compacted versions of this resource's objects:
	// made from dictSeed, the first CacherConfig.DictBytes of them.
	dict     *s2.Dict
	dictSeed []byte
	// rv is the revision the cache reflects; read without mu via rvAtomic.
	rvAtomic  atomic.Int64
	rvChanged chan struct{} // closed and replaced whenever rv advances

	unindexed map[*Watcher]struct{}
	indexed   map[string]map[*Watcher]struct{}

	ready     chan struct{}
	readyOnce sync.Once
}

// NewCacher builds the watch cache of one resource; Run fills it.
func NewCacher(store *Store, cfg CacherConfig) *Cacher {
	if cfg.Capacity <= 0 {
		cfg.Capacity = 4096
	}
	if cfg.CapacityBytes <= 0 {
		cfg.CapacityBytes = DefaultCapacityBytes
	}
	if cfg.WatcherBuffer <= 0 {
		cfg.WatcherBuffer = 4096
	}
	if cfg.DecodedEvents <= 0 {
		cfg.DecodedEvents = DefaultDecodedEvents
	}
	if cfg.DecodedBytes <= 0 {
		cfg.DecodedBytes = DefaultDecodedBytes
	}
	if cfg.DictBytes == 0 {
		cfg.DictBytes = DefaultDictBytes
	}
	if cfg.ProgressInterval <= 0 {
		cfg.ProgressInterval = time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewCacheMetrics(nil)
	}
	return &Cacher{
		bytesGauge: cfg.Metrics.Bytes.WithLabelValues(cfg.Resource),
		compacted:  cfg.Metrics.Compacted.WithLabelValues(cfg.Resource),
		held:       cfg.Metrics.Held.WithLabelValues(cfg.Resource),
		cfg:        cfg,
		store:      store,
		codec:      cfg.Codec,
		items:      map[string]*Entry{},
		ring:       make([]*event, cfg.Capacity),
		rvChanged:  make(chan struct{}),
		unindexed:  map[*Watcher]struct{}{},
		indexed:    map[string]map[*Watcher]struct{}{},
		ready:      make(chan struct{}),
	}
}

// Ready is closed once the cache holds a full list of its resource.
func (c *Cacher) Ready() <-chan struct{} { return c.ready }

// RV is the revision the cache currently reflects.
func (c *Cacher) RV() int64 { return c.rvAtomic.Load() }

// DefaultCapacityBytes is the watch cache ring's size bound when none is
// given: far above what 4,096 ordinary objects take, far below what 4,096
// 1 MiB objects would.
const DefaultCapacityBytes = 128 << 20

// DefaultDecodedEvents is CacherConfig.DecodedEvents when none is given:
// at a few hundred writes a second per resource, a watcher may lag by
// seconds before it decodes a version again.
const DefaultDecodedEvents = 2048

// DefaultDecodedBytes is CacherConfig.DecodedBytes when none is given:
// 2,048 events of pods of up to 8 KiB stored (both versions of each
// event counted), so the event bound is the one ordinary writes meet.
const DefaultDecodedBytes = 32 << 20

// newEntry is one version of one object, decoded from value.
func (c *Cacher) newEntry(key string, obj runtime.Object, rv int64, value []byte) *Entry {
	return newEntry(c.codec, key, obj, rv, value)
}

// newEntry is one version of one object, decoded from value (nil for a
// bookmark), encoded and selected by codec.
func newEntry(codec Codec, key string, obj runtime.Object, rv int64, value []byte) *Entry {
	return &Entry{Key: key, obj: obj, RV: rv, Attrs: codec.Attrs(obj), codec: codec, size: len(value), src: value}
}

// shareWith makes e hold prev's key and attribute pairs where they are
// equal (prev is the version e replaces, or nil): a version that changed
// none of its labels (a pod bound, its status written) holds no copy of
// its own once compacted.
func (e *Entry) shareWith(prev *Entry) {
	if prev == nil {
		return
	}
	e.Key = prev.Key
	if e.Attrs.Namespace == prev.Attrs.Namespace {
		e.Attrs.Namespace = prev.Attrs.Namespace
	}
	if e.Attrs.Labels.Equal(prev.Attrs.Labels) {
		e.Attrs.Labels = prev.Attrs.Labels
	}
	if e.Attrs.Fields.Equal(prev.Attrs.Fields) {
		e.Attrs.Fields = prev.Attrs.Fields
	}
}

// at is the entry's object at revision rv (the object a DELETED event
// carries): decoded from the same bytes, at rv, when first read.
func (e *Entry) at(rv int64) *Entry {
	e.mu.Lock()
	defer e.mu.Unlock()
	return &Entry{Key: e.Key, RV: rv, Attrs: e.Attrs, codec: e.codec, size: e.size, src: e.src, srcProto: e.srcProto, srcDict: e.srcDict}
}

// Run lists the prefix, then follows one etcd watch on it until ctx ends.
// When the watch breaks it resumes from the cache's revision; when that
// revision has been compacted it relists, and every watcher is closed so it
// resumes (or relists) on its own.
func (c *Cacher) Run(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		if err := c.relist(ctx); err != nil {
			if ctx.Err() == nil {
				c.cfg.Log.Warn("watch cache list failed", "resource", c.cfg.Resource, "err", err)
			}
			sleepCtx(ctx, backoff)
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		err := c.follow(ctx)
		if ctx.Err() != nil {
			break
		}
		c.cfg.Log.Warn("watch cache relisting", "resource", c.cfg.Resource, "err", err)
	}
	c.terminateAll()
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// relist replaces the cache's state with a consistent list of the prefix.
func (c *Cacher) relist(ctx context.Context) error {
	items := map[string]*Entry{}
	var rev int64
	start := ""
	for {
		page, err := c.store.List(ctx, c.cfg.Prefix, start, rev, 10000)
		if err != nil {
			return err
		}
		rev = page.Rev
		for _, kv := range page.KVs {
			obj, err := c.codec.Decode(kv.Key, kv.Value, kv.ModRev)
			if err != nil {
				c.cfg.Log.Error("undecodable object skipped", "key", kv.Key, "err", err)
				continue
			}
			items[kv.Key] = c.newEntry(kv.Key, obj, kv.ModRev, kv.Value)
		}
		if !page.More || len(page.KVs) == 0 {
			break
		}
		start = page.KVs[len(page.KVs)-1].Key + "\x00"
	}
	history, from := c.backfill(ctx, rev)
	c.mu.Lock()
	c.terminateLocked()
	c.items = items
	c.head, c.n, c.bytes = 0, 0, 0
	c.decodedN, c.decodedBytes = 0, 0
	clear(c.ring)
	c.oldest = from - 1
	for _, ev := range history {
		c.push(ev)
	}
	c.setRVLocked(rev)
	c.mu.Unlock()
	c.readyOnce.Do(func() { close(c.ready) })
	return nil
}

// backfill reads the prefix's recent history up to rev from etcd, so a cache
// that just started (a restarted apiserver) can still resume the watches of
// clients that were following another apiserver: they get their missed
// events instead of a 410 and a relist. It returns the events and the
// revision they start from; on any failure it returns none, from rev+1.
func (c *Cacher) backfill(ctx context.Context, rev int64) ([]*event, int64) {
	from := max(1, rev-int64(c.cfg.Capacity)+1)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cli := c.store.Client()
	for attempt := 0; attempt < 3; attempt++ {
		wctx, wcancel := context.WithCancel(ctx)
		wch := cli.Watch(wctx, c.cfg.Prefix, clientv3.WithPrefix(), clientv3.WithRev(from), clientv3.WithPrevKV(), clientv3.WithProgressNotify())
		evs, compacted, err := c.readHistory(wctx, cli, wch, rev)
		wcancel()
		switch {
		case err != nil:
			c.cfg.Log.Warn("watch cache history not loaded", "resource", c.cfg.Resource, "err", err)
			return nil, rev + 1
		case compacted > 0:
			from = compacted // history before this is gone
			continue
		}
		return evs, from
	}
	return nil, rev + 1
}

func (c *Cacher) readHistory(ctx context.Context, cli *clientv3.Client, wch clientv3.WatchChan, upTo int64) ([]*event, int64, error) {
	var out []*event
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	decode := func(kv *mvccKV) *Entry {
		if kv == nil || len(kv.Value) == 0 {
			return nil
		}
		obj, err := c.codec.Decode(string(kv.Key), kv.Value, kv.ModRevision)
		if err != nil {
			return nil
		}
		return c.newEntry(string(kv.Key), obj, kv.ModRevision, kv.Value)
	}
	for {
		select {
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-tick.C:
			// A progress notification at or past upTo proves every event up
			// to it has been delivered.
			_ = cli.RequestProgress(ctx)
		case resp, ok := <-wch:
			if !ok {
				return nil, 0, errors.New("history watch closed")
			}
			if resp.CompactRevision != 0 {
				return nil, resp.CompactRevision, nil
			}
			if err := resp.Err(); err != nil {
				return nil, 0, err
			}
			for _, e := range resp.Events {
				if e.Kv.ModRevision > upTo {
					return out, 0, nil
				}
				ev := &event{rv: e.Kv.ModRevision, prev: decode(e.PrevKv)}
				if e.Type != clientv3.EventTypeDelete {
					ev.cur = decode(e.Kv)
				}
				if ev.cur == nil && ev.prev == nil {
					continue
				}
				out = append(out, ev)
			}
			if resp.IsProgressNotify() && resp.Header.Revision >= upTo {
				return out, 0, nil
			}
		}
	}
}

// follow applies the etcd watch's events until it fails.
func (c *Cacher) follow(ctx context.Context) error {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	cli := c.store.Client()
	for {
		from := c.RV() + 1
		wch := cli.Watch(wctx, c.cfg.Prefix, clientv3.WithPrefix(), clientv3.WithRev(from), clientv3.WithProgressNotify())
		c.cfg.Metrics.EtcdWatches.WithLabelValues(c.cfg.Resource).Set(1)
		err := c.consume(wctx, cli, wch)
		c.cfg.Metrics.EtcdWatches.WithLabelValues(c.cfg.Resource).Set(0)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, ErrCompacted) {
			return err
		}
		// The watch broke (leader loss, member down): resume where we are.
		c.cfg.Log.Info("etcd watch broken, resuming", "resource", c.cfg.Resource, "from", c.RV()+1, "err", err)
		sleepCtx(ctx, 50*time.Millisecond)
	}
}

func (c *Cacher) consume(ctx context.Context, cli *clientv3.Client, wch clientv3.WatchChan) error {
	tick := time.NewTicker(c.cfg.ProgressInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			// Ask for a progress notification so the cache's revision (and
			// the bookmarks sent from it) advance while the prefix is quiet.
			_ = cli.RequestProgress(ctx)
		case resp, ok := <-wch:
			if !ok {
				return errors.New("etcd watch channel closed")
			}
			if resp.CompactRevision != 0 {
				return fmt.Errorf("watch from %d: %w (compacted at %d)", c.RV()+1, ErrCompacted, resp.CompactRevision)
			}
			if err := resp.Err(); err != nil {
				return err
			}
			c.waitThaw(ctx)
			if resp.IsProgressNotify() {
				c.advance(resp.Header.Revision)
				continue
			}
			c.apply(resp.Events)
		}
	}
}

// Freeze is a failpoint, testing only: for d the cache applies no change
// from etcd (they wait in the watch), and List serves what it holds
// without waiting until it reflects the version asked for — the stale
// consistent list a linearizability check must catch. d <= 0 thaws it.
func (c *Cacher) Freeze(d time.Duration) {
	if d <= 0 {
		c.frozenUntil.Store(0)
		return
	}
	c.frozenUntil.Store(time.Now().Add(d).UnixNano())
}

// FrozenFor is how much longer a Freeze lasts (0: not frozen).
func (c *Cacher) FrozenFor() time.Duration {
	return max(time.Duration(c.frozenUntil.Load()-time.Now().UnixNano()), 0)
}

func (c *Cacher) frozen() bool {
	until := c.frozenUntil.Load()
	return until != 0 && time.Now().UnixNano() < until
}

// waitThaw waits while the cache is frozen.
func (c *Cacher) waitThaw(ctx context.Context) {
	if c.frozenUntil.Load() == 0 {
		return // never frozen: the hot path
	}
	for ctx.Err() == nil {
		left := time.Duration(c.frozenUntil.Load() - time.Now().UnixNano())
		if left <= 0 {
			return
		}
		sleepCtx(ctx, min(left, 20*time.Millisecond))
	}
}

// advance moves the cache's revision forward without a change.
func (c *Cacher) advance(rev int64) {
	c.mu.Lock()
	if rev > c.RV() {
		c.setRVLocked(rev)
	}
	c.mu.Unlock()
}

func (c *Cacher) setRVLocked(rev int64) {
	c.rvAtomic.Store(rev)
	close(c.rvChanged)
	c.rvChanged = make(chan struct{})
}

// apply decodes a batch of etcd events, outside the lock, then applies and
// dispatches them in order under it.
func (c *Cacher) apply(evs []*clientv3.Event) {
	var at time.Time
	if c.cfg.Observe != nil {
		at = time.Now()
	}
	type decoded struct {
		key   string
		obj   runtime.Object
		rv    int64
		value []byte
	}
	dec := make([]decoded, 0, len(evs))
	for _, e := range evs {
		key := string(e.Kv.Key)
		d := decoded{key: key, rv: e.Kv.ModRevision, value: e.Kv.Value}
		if e.Type == clientv3.EventTypeDelete {
			d.rv = e.Kv.ModRevision // etcd sets the delete's revision here
		} else {
			obj, err := c.codec.Decode(key, e.Kv.Value, e.Kv.ModRevision)
			if err != nil {
				c.cfg.Log.Error("undecodable object in watch", "key", key, "err", err)
				continue
			}
			d.obj = obj
		}
		dec = append(dec, d)
	}
	c.cfg.Metrics.Events.WithLabelValues(c.cfg.Resource).Add(float64(len(dec)))
	c.mu.Lock()
	defer c.mu.Unlock()
	maxRV := c.RV()
	for _, d := range dec {
		if d.rv <= c.RV() {
			continue // already reflected (a resumed watch may repeat)
		}
		ev := &event{rv: d.rv, prev: c.items[d.key]}
		if d.obj != nil {
			ev.cur = c.newEntry(d.key, d.obj, d.rv, d.value)
			ev.cur.shareWith(ev.prev)
			c.items[ev.cur.Key] = ev.cur
		} else {
			if ev.prev == nil {
				continue // deletion of something we never saw
			}
			delete(c.items, d.key)
		}
		c.push(ev)
		if c.cfg.Observe != nil {
			c.cfg.Observe(at, ev.prev, ev.cur)
		}
		c.dispatch(ev)
		maxRV = max(maxRV, d.rv)
	}
	if maxRV > c.RV() {
		c.setRVLocked(maxRV)
	}
}

func (c *Cacher) push(ev *event) {
	capacity := len(c.ring)
	size := ev.size()
	for c.n > 0 && (c.n == capacity || c.bytes+size > c.cfg.CapacityBytes) {
		old := c.ring[c.head]
		if c.n <= c.decodedN {
			// Still decoded (the ring's byte bound let go of it before
			// the decoded bounds did): its versions, which may be
			// current, keep their stored values only.
			c.compactEvent(old)
			c.decodedN--
			c.decodedBytes -= old.size()
		}
		c.oldest = old.rv
		c.bytes -= old.size()
		c.ring[c.head] = nil
		c.head = (c.head + 1) % capacity
		c.n--
	}
	c.ring[(c.head+c.n)%capacity] = ev
	c.n++
	c.bytes += size
	c.bytesGauge.Set(float64(c.bytes))
	c.decodedN++
	c.decodedBytes += size
	for c.decodedN > 1 && (c.decodedN > c.cfg.DecodedEvents || c.decodedBytes > c.cfg.DecodedBytes) {
		// The versions the oldest decoded event made, replaced or deleted
		// keep their stored values only (a version a newer event
		// concerns is compacted when that event ages).
		aged := c.ring[(c.head+c.n-c.decodedN)%capacity]
		c.compactEvent(aged)
		c.decodedN--
		c.decodedBytes -= aged.size()
	}
}

// compactEvent compacts the versions ev made, replaced or deleted. Called
// with mu held.
func (c *Cacher) compactEvent(ev *event) {
	c.compact(ev.cur)
	c.compact(ev.prev)
	c.compact(ev.gone.Load())
}

// DefaultDictBytes is CacherConfig.DictBytes when none is given: a few
// versions of a resource's objects (a pod as created, bound and running),
// so that a later version's fields, labels and managed fields are mostly
// matches into the dictionary (a pod of about 1 KiB is held in under 200
// bytes).
const DefaultDictBytes = 16 << 10

// compact compacts e, compressed with the resource's dictionary once
// there is one; the first versions compacted are kept as they are and
// make the dictionary. Called with mu held.
func (c *Cacher) compact(e *Entry) {
	kept, held := e.compact(c.dict)
	if kept == nil {
		return
	}
	c.compacted.Add(float64(len(kept)))
	c.held.Add(float64(held))
	if c.dict != nil || c.cfg.DictBytes < 0 {
		return
	}
	c.dictSeed = append(c.dictSeed, kept...)
	if len(c.dictSeed) >= c.cfg.DictBytes {
		c.dict = s2.MakeDict(c.dictSeed, c.dictSeed[:min(len(c.dictSeed), 8)])
		c.dictSeed = nil
	}
}

// dispatch hands ev to every watcher it concerns. Called with mu held.
func (c *Cacher) dispatch(ev *event) {
	for w := range c.unindexed {
		c.offer(w, ev)
	}
	if c.cfg.IndexField == "" || len(c.indexed) == 0 {
		return
	}
	var curV, prevV string
	if ev.cur != nil {
		curV = ev.cur.Attrs.Fields.Get(c.cfg.IndexField)
		for w := range c.indexed[curV] {
			c.offer(w, ev)
		}
	}
	if ev.prev != nil {
		prevV = ev.prev.Attrs.Fields.Get(c.cfg.IndexField)
		if ev.cur == nil || prevV != curV {
			for w := range c.indexed[prevV] {
				c.offer(w, ev)
			}
		}
	}
}

// offer queues ev for w if w's filter sees a change. A filter that starts to
// match sees ADDED, one that stops matching sees DELETED (upstream semantics).
func (c *Cacher) offer(w *Watcher, ev *event) {
	if ev.rv <= w.minRV {
		return
	}
	curOK, prevOK := w.filter.matches(ev.cur), w.filter.matches(ev.prev)
	var it Item
	switch {
	case curOK && prevOK:
		it = Item{Type: watch.Modified, Entry: ev.cur}
	case curOK:
		it = Item{Type: watch.Added, Entry: ev.cur}
	case prevOK:
		it = Item{Type: watch.Deleted, Entry: ev.deleted()}
	default:
		return
	}
	if !w.queue(it, c.cfg.WatcherBuffer) {
		// Too far behind: close it rather than stall every other watcher.
		// The client resumes from the last resourceVersion it saw.
		c.cfg.Metrics.Terminated.WithLabelValues(c.cfg.Resource).Inc()
		c.removeLocked(w)
		w.terminate()
	}
}

// WaitFor blocks until the cache reflects revision rev or ctx ends.
func (c *Cacher) WaitFor(ctx context.Context, rev int64) error {
	for {
		c.mu.RLock()
		cur, changed := c.RV(), c.rvChanged
		c.mu.RUnlock()
		if cur >= rev {
			return nil
		}
		// Revisions of other resources advance only through progress
		// notifications; ask for one rather than wait for the ticker. etcd's
		// client finds the watch stream by the context's metadata, so the
		// request must carry the cache watch's (require-leader).
		_ = c.store.Client().RequestProgress(clientv3.WithRequireLeader(ctx))
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s cache to reach %d (at %d): %w", c.cfg.Resource, rev, cur, ErrTooLarge)
		case <-changed:
		}
	}
}

// List returns the entries that pass f, sorted by key, and the revision they
// reflect, after waiting until the cache reflects at least minRV.
func (c *Cacher) List(ctx context.Context, minRV int64, f Filter) ([]*Entry, int64, error) {
	if err := c.waitReady(ctx); err != nil {
		return nil, 0, err
	}
	if minRV > 0 && !c.frozen() {
		if err := c.WaitFor(ctx, minRV); err != nil {
			return nil, 0, err
		}
	}
	c.mu.RLock()
	out := make([]*Entry, 0, len(c.items))
	if name, ok := exactName(f); ok {
		// A get-by-name through a list (kubectl get pod x -w does this).
		for k, e := range c.items {
			if strings.HasSuffix(k, "/"+name) && f.matches(e) {
				out = append(out, e)
			}
		}
	} else {
		for _, e := range c.items {
			if f.matches(e) {
				out = append(out, e)
			}
		}
	}
	rv := c.RV()
	c.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, rv, nil
}

func exactName(f Filter) (string, bool) {
	if f.Field == nil {
		return "", false
	}
	return f.Field.RequiresExactMatch("metadata.name")
}

// Get returns the cached entry at key, if any.
func (c *Cacher) Get(key string) (*Entry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.items[key]
	return e, ok
}

func (c *Cacher) waitReady(ctx context.Context) error {
	select {
	case <-c.ready:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s watch cache not ready: %w", c.cfg.Resource, ctx.Err())
	}
}

// WatchOptions says where a watch starts and what it sees.
type WatchOptions struct {
	// FromRV resumes after this revision. Zero starts from the current state,
	// which is sent first as ADDED events when SendInitial is set.
	FromRV      int64
	SendInitial bool
	// InitialEventsEnd sends a BOOKMARK annotated k8s.io/initial-events-end
	// after the initial events (the streaming-list protocol).
	InitialEventsEnd bool
	Bookmarks        bool
	// BookmarkInterval is how often a bookmark is offered (Bookmarks only).
	BookmarkInterval time.Duration
	Filter           Filter
}

// Watch starts a watch. A FromRV older than the cache's window returns
// ErrCompacted (the client gets 410 Gone and relists).
func (c *Cacher) Watch(ctx context.Context, o WatchOptions) (*Watcher, error) {
	if err := c.waitReady(ctx); err != nil {
		return nil, err
	}
	w := &Watcher{
		c:        c,
		ready:    make(chan struct{}, 1),
		done:     make(chan struct{}),
		filter:   o.Filter,
		opts:     o,
		indexKey: "",
	}
	if c.cfg.IndexField != "" && o.Filter.Field != nil {
		if v, ok := o.Filter.Field.RequiresExactMatch(c.cfg.IndexField); ok {
			w.indexed, w.indexKey = true, v
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	rv := c.RV()
	switch {
	case o.FromRV == 0 || o.SendInitial:
		if o.SendInitial {
			for _, e := range c.items {
				if w.filter.matches(e) {
					w.initial = append(w.initial, Item{Type: watch.Added, Entry: e})
				}
			}
			sort.Slice(w.initial, func(i, j int) bool { return w.initial[i].Entry.Key < w.initial[j].Entry.Key })
		}
		if o.InitialEventsEnd {
			w.initial = append(w.initial, Item{Type: watch.Bookmark, Entry: c.newEntry("", c.codec.Bookmark(rv, true), rv, nil)})
		}
		w.minRV = rv
	case o.FromRV < c.oldest:
		return nil, fmt.Errorf("%s: watch from %d, oldest available %d: %w", c.cfg.Resource, o.FromRV, c.oldest, ErrCompacted)
	default:
		// Replay what the ring holds after FromRV; newer events arrive live.
		// A FromRV ahead of the cache waits for its events; callers that
		// must judge the window against what the client has seen call
		// WaitFor(FromRV) first (the apiserver's watch does).
		for i := 0; i < c.n; i++ {
			ev := c.ring[(c.head+i)%len(c.ring)]
			if ev.rv <= o.FromRV {
				continue
			}
			if it, ok := w.itemFor(c, ev); ok {
				w.initial = append(w.initial, it)
			}
		}
		w.minRV = max(rv, o.FromRV)
	}
	w.lastRV = min(w.minRV, rv)
	if o.FromRV > 0 && !o.SendInitial {
		w.lastRV = o.FromRV
	}
	c.addLocked(w)
	c.cfg.Metrics.Watchers.WithLabelValues(c.cfg.Resource).Inc()
	return w, nil
}

func (c *Cacher) addLocked(w *Watcher) {
	if !w.indexed {
		c.unindexed[w] = struct{}{}
		return
	}
	set := c.indexed[w.indexKey]
	if set == nil {
		set = map[*Watcher]struct{}{}
		c.indexed[w.indexKey] = set
	}
	set[w] = struct{}{}
}

// removeLocked forgets w; it reports whether w was still registered.
func (c *Cacher) removeLocked(w *Watcher) bool {
	if !w.indexed {
		if _, ok := c.unindexed[w]; !ok {
			return false
		}
		delete(c.unindexed, w)
	} else {
		set := c.indexed[w.indexKey]
		if _, ok := set[w]; !ok {
			return false
		}
		delete(set, w)
		if len(set) == 0 {
			delete(c.indexed, w.indexKey)
		}
	}
	c.cfg.Metrics.Watchers.WithLabelValues(c.cfg.Resource).Dec()
	return true
}

func (c *Cacher) terminateLocked() {
	for w := range c.unindexed {
		c.removeLocked(w)
		w.terminate()
	}
	for _, set := range c.indexed {
		for w := range set {
			c.removeLocked(w)
			w.terminate()
		}
	}
}

func (c *Cacher) terminateAll() {
	c.mu.Lock()
	c.terminateLocked()
	c.mu.Unlock()
}

// Watcher is one client's watch on a Cacher.
type Watcher struct {
	c *Cacher
	// q is a ring of the live items queued for the reader (qn of them,
	// the first at qhead): it doubles as a burst needs, up to
	// CacherConfig.WatcherBuffer items, and a large one is let go once
	// drained, so an idle watcher (a hollow kubelet's) holds no queue.
	// ready says an item was queued into an empty queue.
	qmu       sync.Mutex
	q         []Item
	qhead, qn int
	ready     chan struct{}
	done      chan struct{}
	doneOnce  sync.Once
	filter    Filter
	opts      WatchOptions
	indexed   bool
	indexKey  string

	initial []Item
	minRV   int64 // live events at or below this are already covered
	lastRV  int64 // the last revision delivered

	// The bookmark timer, reused across Next calls; only the watch's one
	// reader uses it.
	bookmark *time.Timer
}

func (w *Watcher) itemFor(c *Cacher, ev *event) (Item, bool) {
	curOK, prevOK := w.filter.matches(ev.cur), w.filter.matches(ev.prev)
	switch {
	case curOK && prevOK:
		return Item{Type: watch.Modified, Entry: ev.cur}, true
	case curOK:
		return Item{Type: watch.Added, Entry: ev.cur}, true
	case prevOK:
		return Item{Type: watch.Deleted, Entry: ev.deleted()}, true
	}
	return Item{}, false
}

func (w *Watcher) terminate() { w.doneOnce.Do(func() { close(w.done) }) }

// queue adds it to w's queue unless limit items are queued already.
func (w *Watcher) queue(it Item, limit int) bool {
	w.qmu.Lock()
	if w.qn >= limit {
		w.qmu.Unlock()
		return false
	}
	if w.qn == len(w.q) {
		grown := make([]Item, min(max(2*len(w.q), 8), limit))
		for i := range w.qn {
			grown[i] = w.q[(w.qhead+i)%len(w.q)]
		}
		w.q, w.qhead = grown, 0
	}
	w.q[(w.qhead+w.qn)%len(w.q)] = it
	w.qn++
	wasEmpty := w.qn == 1
	w.qmu.Unlock()
	if wasEmpty {
		// The reader may be waiting: it waits only on an empty queue.
		select {
		case w.ready <- struct{}{}:
		default: // already said
		}
	}
	return true
}

// dequeue takes the first queued item, if any, and advances lastRV to it.
func (w *Watcher) dequeue() (Item, bool) {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	if w.qn == 0 {
		return Item{}, false
	}
	it := w.q[w.qhead]
	w.q[w.qhead] = Item{}
	w.qhead = (w.qhead + 1) % len(w.q)
	w.qn--
	if w.qn == 0 && len(w.q) > drainedQueueKept {
		w.q, w.qhead = nil, 0 // drained: a burst's queue is let go
	}
	w.lastRV = max(w.lastRV, it.Entry.RV)
	return it, true
}

// queued is how many live items wait in w's queue.
func (w *Watcher) queued() int {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	return w.qn
}

// drainedQueueKept is the largest queue a drained watcher keeps for the
// next items.
const drainedQueueKept = 64

// ErrWatchClosed ends a watch the cache closed (the watcher fell behind or
// the cache relisted). Clients resume from their last resourceVersion.
var ErrWatchClosed = errors.New("watch closed by the watch cache")

// resetTimer reuses t (one per watcher: Next runs on every event of every
// watcher, and a fresh timer each time is garbage on the fan-out path). Since
// Go 1.23 Reset also discards a value the old timer may have left.
func resetTimer(t *time.Timer, d time.Duration) *time.Timer {
	if t == nil {
		return time.NewTimer(d)
	}
	t.Reset(d)
	return t
}

// popItem takes the first of a watcher's queued items (which must not be
// empty), dropping the queue's reference to it, and advances last to its
// revision.
func popItem(items *[]Item, last *int64) Item {
	it := (*items)[0]
	(*items)[0] = Item{}
	*items = (*items)[1:]
	*last = max(*last, it.Entry.RV)
	return it
}

// Next returns the next item, blocking until there is one, a bookmark is
// due, ctx ends, or the cache closes the watch.
func (w *Watcher) Next(ctx context.Context) (Item, error) {
	if len(w.initial) > 0 {
		return popItem(&w.initial, &w.lastRV), nil
	}
	// A bookmark is offered after BookmarkInterval without an item.
	var tick <-chan time.Time
	if w.opts.Bookmarks && w.opts.BookmarkInterval > 0 {
		w.bookmark = resetTimer(w.bookmark, w.opts.BookmarkInterval)
		tick = w.bookmark.C
	}
	for {
		if it, ok := w.dequeue(); ok {
			return it, nil
		}
		select {
		case <-w.ready:
		case <-w.done:
			// Deliver what was queued before the close.
			if it, ok := w.dequeue(); ok {
				return it, nil
			}
			return Item{}, ErrWatchClosed
		case <-ctx.Done():
			return Item{}, ctx.Err()
		case <-tick:
			// Every event at or below rv was queued before rv was published;
			// with the queue empty they have all been delivered.
			rv := w.c.RV()
			if w.queued() == 0 && rv >= w.lastRV {
				w.lastRV = rv
				return Item{Type: watch.Bookmark, Entry: w.c.newEntry("", w.c.codec.Bookmark(rv, false), rv, nil)}, nil
			}
			w.bookmark.Reset(w.opts.BookmarkInterval)
		}
	}
}

// Pending is how many items are ready without blocking.
func (w *Watcher) Pending() int { return len(w.initial) + w.queued() }

// Stop unregisters the watcher. Safe to call more than once.
func (w *Watcher) Stop() {
	w.c.mu.Lock()
	w.c.removeLocked(w)
	w.c.mu.Unlock()
	w.terminate()
	if w.bookmark != nil {
		w.bookmark.Stop()
	}
}
