package apiserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/kstep-dev/kstep/cluster/storage"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// fromStorage converts a stored object to the request's version.
func (q *request) fromStorage(obj runtime.Object) runtime.Object {
	if q.res.convert != nil {
		return q.res.convert.fromStorage(obj)
	}
	return obj
}

func (q *request) storageResource() *resource {
	if q.res.storage != nil {
		return q.res.storage
	}
	return q.res
}

// read returns the current object with a quorum read from etcd, decoded
// fresh: callers own it.
func (q *request) read(ctx context.Context, namespace, name string) (runtime.Object, error) {
	sr := q.storageResource()
	kv, err := q.s.store.Get(ctx, sr.key(namespace, name))
	if err != nil {
		return nil, storageError(err, q.gr(), name)
	}
	obj, err := decodeStored(sr, kv.Value, kv.ModRev)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return obj, nil
}

func (q *request) get() error {
	rv := q.r.URL.Query().Get("resourceVersion")
	var obj runtime.Object
	if c := q.s.cacher(q.storageResource()); rv != "" && c != nil {
		// Any version at least as new as rv will do: the watch cache.
		min := int64(0)
		if rv != "0" {
			n, err := parseRV(rv)
			if err != nil {
				return err
			}
			min = n
		}
		ctx, cancel := context.WithTimeout(q.ctx(), 3*time.Second)
		err := c.WaitFor(ctx, min)
		cancel()
		if err != nil {
			return storageError(err, q.gr(), q.ri.Name)
		}
		e, ok := c.Get(q.storageResource().key(q.ri.Namespace, q.ri.Name))
		if !ok {
			return apierrors.NewNotFound(q.gr(), q.ri.Name)
		}
		obj = e.ObjectCopy()
	} else {
		var err error
		if obj, err = q.read(q.ctx(), q.ri.Namespace, q.ri.Name); err != nil {
			return err
		}
	}
	obj = q.fromStorage(obj)
	if q.ri.Subresource == "scale" {
		sc, err := toScale(obj)
		if err != nil {
			return err
		}
		q.s.writeObject(q.w, q.r, http.StatusOK, q.res, sc)
		return nil
	}
	q.s.writeObject(q.w, q.r, http.StatusOK, q.res, obj)
	return nil
}

// list serves from the watch cache whenever the semantics allow it:
// resourceVersion "0" (any), a NotOlderThan version (waits for the cache to
// reach it), and the unset version without limit (a consistent read: the
// cache is brought up to etcd's current revision first). Exact versions,
// limits on consistent reads, and continues read etcd at a revision.
func (q *request) list() error {
	p, err := parseListParams(q.r.URL.Query(), q.res, q.ri.Namespace)
	if err != nil {
		return err
	}
	out, ok := negotiate(q.r, q.res.pb != nil)
	if !ok {
		notAcceptable(q.w)
		return nil
	}
	switch {
	case p.cont != "":
		tok, err := parseContinue(p.cont, q.storageResource().prefix(p.filter.Namespace))
		if err != nil {
			return err
		}
		return q.listEtcd(p, out, tok.RV, tok.Start)
	case q.s.cacher(q.storageResource()) == nil:
		// Uncached: etcd now is at least as new as any version asked for,
		// unless the client wants that exact one.
		rev := int64(0)
		if p.rvMatch == metav1.ResourceVersionMatchExact {
			rev, _ = parseRV(p.rv)
		}
		return q.listEtcd(p, out, rev, "")
	case p.rv == "0":
		return q.listCache(p, out, 0)
	case p.rv == "":
		if p.limit > 0 {
			return q.listEtcd(p, out, 0, "")
		}
		rev, err := q.s.store.Revision(q.ctx())
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		return q.listCache(p, out, rev)
	case p.rvMatch == metav1.ResourceVersionMatchExact:
		n, _ := parseRV(p.rv)
		return q.listEtcd(p, out, n, "")
	default:
		n, _ := parseRV(p.rv)
		if p.limit > 0 {
			// A page at the current revision is not older than n.
			return q.listEtcd(p, out, 0, "")
		}
		return q.listCache(p, out, n)
	}
}

func (q *request) listCache(p *listParams, out output, minRV int64) error {
	ctx, cancel := context.WithTimeout(q.ctx(), 3*time.Second)
	defer cancel()
	entries, rv, err := q.s.cacher(q.storageResource()).List(ctx, minRV, p.filter)
	if err != nil {
		return storageError(err, q.gr(), "")
	}
	if out == outTable || q.res.convert != nil {
		objs := make([]runtime.Object, len(entries))
		for i, e := range entries {
			objs[i] = q.fromStorage(e.Object())
		}
		return q.writeObjects(out, objs, itoa(rv), "")
	}
	items := make([][]byte, len(entries))
	for i, e := range entries {
		if out == outProtobuf {
			items[i], err = e.Protobuf()
		} else {
			items[i], err = e.JSON()
		}
		if err != nil {
			return apierrors.NewInternalError(err)
		}
	}
	writeList(q.w, out, q.res, items, itoa(rv), "", nil)
	return nil
}

// listEtcd reads etcd at rev (0: now) from start, filtering as it goes,
// until limit objects matched or the prefix ends.
func (q *request) listEtcd(p *listParams, out output, rev int64, start string) error {
	sr := q.storageResource()
	prefix := sr.prefix(p.filter.Namespace)
	var objs []runtime.Object
	cont := ""
	page := max(p.limit, 500)
	for {
		res, err := q.s.store.List(q.ctx(), prefix, start, rev, page)
		if err != nil {
			if errors.Is(err, storage.ErrCompacted) {
				return apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.")
			}
			return storageError(err, q.gr(), "")
		}
		rev = res.Rev
		for i, kv := range res.KVs {
			obj, err := decodeStored(sr, kv.Value, kv.ModRev)
			if err != nil {
				return apierrors.NewInternalError(err)
			}
			if !p.filter.Matches(attrsOf(sr, obj)) {
				continue
			}
			objs = append(objs, q.fromStorage(obj))
			if p.limit > 0 && int64(len(objs)) == p.limit {
				if i < len(res.KVs)-1 || res.More {
					if cont, err = (continueToken{RV: rev, Start: kv.Key + "\x00"}).encode(prefix); err != nil {
						return apierrors.NewInternalError(err)
					}
				}
				return q.writeObjects(out, objs, itoa(rev), cont)
			}
		}
		if !res.More || len(res.KVs) == 0 {
			break
		}
		start = res.KVs[len(res.KVs)-1].Key + "\x00"
	}
	return q.writeObjects(out, objs, itoa(rev), cont)
}

func (q *request) writeObjects(out output, objs []runtime.Object, rv, cont string) error {
	if out == outTable {
		q.s.writeTable(q.w, q.r, http.StatusOK, q.res, objs, rv, cont)
		return nil
	}
	items := make([][]byte, len(objs))
	for i, o := range objs {
		var b []byte
		var err error
		if out == outProtobuf {
			b, err = marshalProto(o)
		} else {
			b, err = json.Marshal(o)
		}
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		items[i] = b
	}
	writeList(q.w, out, q.res, items, rv, cont, nil)
	return nil
}

// watch streams events from the watch cache. The stream is JSON frames,
// {"type":...,"object":...}, one per line, or when the client prefers
// protobuf (client-go's typed clients do) length-prefixed protobuf
// WatchEvents (protobuf.go); either is flushed whenever the watcher has
// nothing more queued (and at least every WatchFlushInterval while it has).
func (q *request) watch() error {
	p, err := parseListParams(q.r.URL.Query(), q.res, q.ri.Namespace)
	if err != nil {
		return err
	}
	if q.ri.Name != "" { // GET .../pods/x?watch=true: a watch of one object
		sel := fields.OneTermEqualSelector("metadata.name", q.ri.Name)
		if p.filter.Field != nil {
			sel = fields.AndSelectors(sel, p.filter.Field)
		}
		p.filter.Field = sel
	}
	out, ok := negotiate(q.r, q.res.pb != nil)
	if !ok || out == outYAML {
		out = outJSON
	}
	timeout := p.timeout
	if min := q.s.opts.MinRequestTimeout; timeout == 0 && min > 0 {
		// As upstream, a watch without timeoutSeconds ends after a random
		// time in [min, 2*min) (--min-request-timeout), so that clients
		// reconnect (and rebalance across apiservers) gradually.
		timeout = min + time.Duration(rand.Int64N(int64(min)))
	}
	ctx, cancel := q.ctx(), context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()

	c := q.s.cacher(q.storageResource())
	opts := storage.WatchOptions{Filter: p.filter, Bookmarks: p.bookmarks, BookmarkInterval: q.s.opts.BookmarkInterval}
	minRV := int64(0)
	switch {
	case p.sendInitial != nil && *p.sendInitial:
		opts.SendInitial, opts.InitialEventsEnd = true, true
		if p.rv != "" && p.rv != "0" {
			minRV, _ = parseRV(p.rv)
		} else if p.rv == "" && c != nil {
			// The cache must reach etcd's revision first (an uncached
			// resource's etcd watch reads it itself).
			if minRV, err = q.s.store.Revision(ctx); err != nil {
				return apierrors.NewInternalError(err)
			}
		}
	case p.rv == "" || p.rv == "0":
		opts.SendInitial = p.sendInitial == nil // sendInitialEvents=false: changes only
	default:
		// Judge the window only once the cache has caught up with the
		// version the client has already seen (upstream's
		// waitUntilFreshAndBlock): a cache that lags (its etcd watch
		// was just opened, and etcd syncs a lagging watch every 100 ms)
		// would otherwise replay from a version whose events it has not
		// yet received, then evicted, instead of answering 410.
		opts.FromRV, _ = parseRV(p.rv)
		minRV = opts.FromRV
	}
	var w storage.Stream
	if c == nil {
		// Uncached: an etcd watch of this client's own, from the
		// namespace's prefix; etcd is as fresh as any version seen.
		sr := q.storageResource()
		w, err = q.s.store.WatchEtcd(ctx, sr.prefix(p.filter.Namespace), cacheCodec{r: sr}, opts)
	} else {
		if minRV > 0 {
			wctx, wcancel := context.WithTimeout(ctx, 3*time.Second)
			err := c.WaitFor(wctx, minRV)
			wcancel()
			if err != nil {
				return storageError(err, q.gr(), "")
			}
		}
		w, err = c.Watch(ctx, opts)
	}
	if err != nil && !errors.Is(err, storage.ErrCompacted) {
		return storageError(err, q.gr(), "")
	}
	if out == outProtobuf {
		q.w.Header().Set("Content-Type", watchProtobufType)
	} else {
		q.w.Header().Set("Content-Type", "application/json")
	}
	q.w.Header().Set("Cache-Control", "no-cache, private")
	q.w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(q.w, 32<<10)
	// A client that stops reading is cut off once a write has stalled for
	// WatchStallTimeout: the stream ends, the watcher and everything its
	// queue pins are freed, and the client resumes or relists. A stream
	// with nothing to write holds no deadline (stall.go).
	g := newStallGuard(q.w, q.s.opts.WatchStallTimeout)
	defer g.stop()
	flush := func() error {
		g.write()
		if err := bw.Flush(); err != nil {
			return err
		}
		if err := g.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		g.idle()
		return nil
	}
	if err != nil {
		// Too old: the error arrives in the stream, as upstream's watch
		// cache sends it; the client relists.
		if werr := writeWatchStatus(bw, out, &apierrors.NewResourceExpired(err.Error()).ErrStatus); werr != nil {
			return nil // nothing the client could read: end the stream
		}
		flush()
		return nil
	}
	defer w.Stop()
	flush()
	// A stream is flushed whenever nothing more is queued for it: an idle
	// stream hands each event on at once, as upstream's watch server
	// does. Only a backlog coalesces: events already queued are written
	// into the buffer without a flush, many per syscall (with a thousand
	// watchers, a syscall per event per watcher is where the CPU would go
	// under load), but never for longer than WatchFlushInterval, so a
	// stream that stays busy is still flushed that often.
	interval := q.s.opts.WatchFlushInterval
	var lastFlush time.Time
	dirty := false
	for {
		if dirty && (w.Pending() == 0 || time.Since(lastFlush) >= interval) {
			if flush() != nil {
				return nil
			}
			lastFlush, dirty = time.Now(), false
		}
		it, err := w.Next(ctx)
		if err != nil {
			flush()
			return nil // timeout, client gone, or closed by the cache: end the stream
		}
		if it.Type != watch.Bookmark && q.s.failpoints.dropEvent(q.res.storageName(), q.r.UserAgent()) {
			continue
		}
		g.write()
		if err := q.writeEvent(bw, out, it); err != nil {
			return nil
		}
		if _, err := bw.Write(nil); err != nil {
			return nil // a write failed (the stall deadline, or the client went): bufio keeps the error
		}
		dirty = true
	}
}

// writeWatchStatus writes an ERROR event carrying s.
func writeWatchStatus(bw *bufio.Writer, out output, s *metav1.Status) error {
	s.Kind, s.APIVersion, s.Status = "Status", "v1", metav1.StatusFailure
	if out == outProtobuf {
		raw, err := marshalProto(s)
		if err != nil {
			return err
		}
		writeProtoFrame(bw, string(watch.Error), statusTypeMeta, raw)
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode watch status: %w", err)
	}
	writeFrame(bw, watch.Error, b)
	return nil
}

func writeFrame(bw *bufio.Writer, t watch.EventType, obj []byte) {
	bw.WriteString(`{"type":"`)
	bw.WriteString(string(t))
	bw.WriteString(`","object":`)
	bw.Write(obj)
	bw.WriteString("}\n")
}

// writeEvent writes one watch frame. The common case reuses the entry's
// cached encoding, shared by every watcher of the event.
func (q *request) writeEvent(bw *bufio.Writer, out output, it storage.Item) error {
	var b []byte
	var err error
	if out == outProtobuf {
		// Cache entries are of the storage resource's kind, which is the
		// served one unless a conversion serves them as another.
		if q.res.convert != nil {
			b, err = marshalProto(q.fromStorage(it.Entry.Object()))
		} else {
			b, err = it.Entry.Protobuf()
		}
		if err != nil {
			return err
		}
		writeProtoFrame(bw, string(it.Type), q.res.pb.item, b)
		return nil
	}
	switch {
	case out == outTable && it.Type != watch.Bookmark:
		t, terr := tableFor(q.r, q.res, []runtime.Object{q.fromStorage(it.Entry.Object())}, q.s.now())
		if terr != nil {
			return terr
		}
		t.ResourceVersion = itoa(it.Entry.RV)
		b, err = json.Marshal(t)
	case q.res.convert != nil:
		b, err = json.Marshal(q.fromStorage(it.Entry.Object()))
	default:
		b, err = it.Entry.JSON()
	}
	if err != nil {
		return err
	}
	writeFrame(bw, it.Type, b)
	return nil
}
