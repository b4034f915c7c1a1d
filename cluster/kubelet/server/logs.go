package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kstep-dev/kstep/cluster/kubelet"
)

// logOptions are /containerLogs' query parameters (PodLogOptions').
type logOptions struct {
	follow, timestamps, previous bool
	tail                         int64 // lines from the end; <0 all
	since                        time.Time
	limit                        int64 // bytes; 0 no limit
}

func parseBool(q url.Values, name string) (bool, error) {
	v := q.Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("invalid value for %s: %q: want true or false", name, bounded(v))
	}
	return b, nil
}

func parseInt(q url.Values, name string, min int64) (int64, bool, error) {
	v := q.Get(name)
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < min {
		return 0, false, fmt.Errorf("invalid value for %s: %q: want an integer >= %d", name, bounded(v), min)
	}
	return n, true, nil
}

func parseLogOptions(q url.Values, now time.Time) (logOptions, error) {
	o := logOptions{tail: -1}
	var err error
	for _, b := range []struct {
		name string
		v    *bool
	}{{"follow", &o.follow}, {"timestamps", &o.timestamps}, {"previous", &o.previous}} {
		if *b.v, err = parseBool(q, b.name); err != nil {
			return o, err
		}
	}
	if n, ok, err := parseInt(q, "tailLines", 0); err != nil {
		return o, err
	} else if ok {
		o.tail = n
	}
	if n, ok, err := parseInt(q, "limitBytes", 1); err != nil {
		return o, err
	} else if ok {
		o.limit = n
	}
	secs, hasSecs, err := parseInt(q, "sinceSeconds", 1)
	if err != nil {
		return o, err
	}
	if v := q.Get("sinceTime"); v != "" {
		if hasSecs {
			return o, errors.New("at most one of sinceTime or sinceSeconds may be specified")
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return o, fmt.Errorf("invalid value for sinceTime: %q: want an RFC 3339 time", bounded(v))
		}
		o.since = t
	}
	if hasSecs {
		if secs > 100*365*24*3600 {
			secs = 100 * 365 * 24 * 3600
		}
		o.since = now.Add(-time.Duration(secs) * time.Second)
	}
	return o, nil
}

// containerLogs serves /containerLogs/{ns}/{pod}/{container}.
func (s *Server) containerLogs(w http.ResponseWriter, r *http.Request) {
	k := nodeOf(r)
	opts, err := parseLogOptions(r.URL.Query(), time.Now())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	pod, name, ok := podContainer(w, k, r.PathValue("ns"), r.PathValue("pod"), "", r.PathValue("container"))
	if !ok {
		return
	}
	c, err := k.Container(r.Context(), pod, name, opts.previous)
	if err != nil {
		writeRuntimeError(w, err)
		return
	}
	if c.LogPath == "" {
		http.Error(w, fmt.Sprintf("container %q in pod %q has no log file", name, pod.Name), http.StatusNotFound)
		return
	}
	f, err := k.OpenLog(c.LogPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			http.Error(w, fmt.Sprintf("log of container %q in pod %q not found: %v", name, pod.Name, err), http.StatusNotFound)
			return
		}
		http.Error(w, fmt.Sprintf("opening the log of container %q: %v", name, err), http.StatusInternalServerError)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	flush := func() {}
	if fl, ok := w.(http.Flusher); ok {
		flush = fl.Flush
	}
	running := func() bool { return false }
	if opts.follow && !opts.previous && c.Running() {
		id := c.ID
		running = func() bool {
			st, err := k.Runtime().ContainerStatus(r.Context(), id)
			return err == nil && st.State == c.State
		}
	}
	if err := copyLog(r.Context(), f, w, flush, opts, running); err != nil && r.Context().Err() == nil {
		s.log.Debug("kubelet server: container log", "pod", pod.Namespace+"/"+pod.Name, "container", name, "err", err)
	}
}

// podContainer finds a pod of the node and one of its containers (by
// name; uid, when given, must match), answering 404 itself.
func podContainer(w http.ResponseWriter, k *kubelet.Kubelet, ns, name, uid, container string) (*corev1.Pod, string, bool) {
	pod, ok := k.Pod(ns, name)
	if !ok || uid != "" && string(pod.UID) != uid {
		http.Error(w, fmt.Sprintf("pod %q in namespace %q does not exist on node %s", bounded(name), bounded(ns), k.NodeName()), http.StatusNotFound)
		return nil, "", false
	}
	if container == "" {
		return pod, "", true
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == container {
			return pod, container, true
		}
	}
	http.Error(w, fmt.Sprintf("container %q not found in pod %q", bounded(container), pod.Name), http.StatusNotFound)
	return nil, "", false
}

// Bounds of the log reader.
const (
	readBuffer  = 64 << 10
	maxRecord   = 1 << 20 // a longer line (CRI's are at most 16 KiB) is skipped
	tailBlock   = 32 << 10
	followPoll  = 100 * time.Millisecond
	followCheck = time.Second // how often follow asks whether the container still runs
)

// tailOffset is where the last n lines of f start, found reading
// backwards from its end; a last line without its newline counts.
func tailOffset(f io.ReadSeeker, n int64) (int64, error) {
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil || n == 0 {
		return size, err
	}
	buf := make([]byte, tailBlock)
	found := int64(0)
	for pos := size; pos > 0; {
		step := min(int64(len(buf)), pos)
		pos -= step
		if _, err := f.Seek(pos, io.SeekStart); err != nil {
			return 0, err
		}
		if _, err := io.ReadFull(f, buf[:step]); err != nil {
			return 0, err
		}
		for i := step - 1; i >= 0; i-- {
			if buf[i] != '\n' || pos+i == size-1 {
				continue
			}
			if found++; found == n {
				return pos + i + 1, nil
			}
		}
	}
	return 0, nil
}

// record is one CRI log line: "<RFC3339Nano> <stream> <P|F>[:tags] <msg>".
type record struct {
	ts      time.Time
	stamp   []byte
	msg     []byte
	partial bool
}

func parseRecord(line []byte) (record, bool) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	var r record
	i := bytes.IndexByte(line, ' ')
	if i < 0 {
		return r, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(line[:i]))
	if err != nil {
		return r, false
	}
	r.ts, r.stamp = t, line[:i]
	rest := line[i+1:]
	if i = bytes.IndexByte(rest, ' '); i < 0 { // stream
		return r, false
	}
	rest = rest[i+1:]
	tag := rest
	if i = bytes.IndexByte(rest, ' '); i >= 0 {
		tag, r.msg = rest[:i], rest[i+1:]
	}
	if j := bytes.IndexByte(tag, ':'); j >= 0 {
		tag = tag[:j]
	}
	switch string(tag) {
	case "P":
		r.partial = true
	case "F":
	default:
		return r, false
	}
	return r, true
}

// copyLog writes a CRI log to w as opts say. With follow it keeps reading
// what is appended until ctx ends or running reports the container gone.
func copyLog(ctx context.Context, f io.Reader, w io.Writer, flush func(), opts logOptions, running func() bool) error {
	if opts.tail >= 0 {
		if rs, ok := f.(io.ReadSeeker); ok {
			off, err := tailOffset(rs, opts.tail)
			if err != nil {
				return err
			}
			if _, err := rs.Seek(off, io.SeekStart); err != nil {
				return err
			}
		} else {
			lines, err := lastLines(f, opts.tail)
			if err != nil {
				return err
			}
			f = io.MultiReader(bytes.NewReader(lines), f)
		}
	}
	out := &limitWriter{w: w, left: opts.limit}
	br := bufio.NewReaderSize(f, readBuffer)
	var pending []byte
	overflow := false
	lastCheck := time.Now()
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case err == nil:
			line := chunk
			if len(pending) > 0 {
				line = append(pending, chunk...)
			}
			if !overflow {
				if rec, ok := parseRecord(line); ok && !rec.ts.Before(opts.since) {
					if done := writeRecord(out, rec, opts.timestamps); done {
						flush()
						return nil
					}
				}
			}
			pending, overflow = pending[:0], false
			continue
		case errors.Is(err, bufio.ErrBufferFull):
			if !overflow {
				pending = append(pending, chunk...)
				if len(pending) > maxRecord {
					pending, overflow = pending[:0], true
				}
			}
			continue
		case errors.Is(err, io.EOF):
			if !overflow {
				pending = append(pending, chunk...) // a line still being written
			}
		default:
			return err
		}
		flush()
		if out.err != nil {
			return out.err
		}
		if !opts.follow {
			return nil
		}
		if time.Since(lastCheck) >= followCheck {
			lastCheck = time.Now()
			if !running() {
				// Read once more what it wrote before it stopped.
				opts.follow = false
				continue
			}
		}
		t := time.NewTimer(followPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// writeRecord writes one record; true once the byte limit is reached or
// writing failed.
func writeRecord(out *limitWriter, rec record, timestamps bool) bool {
	if timestamps {
		out.write(rec.stamp)
		out.write([]byte{' '})
	}
	out.write(rec.msg)
	if !rec.partial {
		out.write([]byte{'\n'})
	}
	return out.done()
}

type limitWriter struct {
	w    io.Writer
	left int64 // 0: no limit
	hit  bool
	err  error
}

func (l *limitWriter) write(p []byte) {
	if l.hit || l.err != nil {
		return
	}
	if l.left > 0 {
		if int64(len(p)) >= l.left {
			p, l.hit = p[:l.left], true
		}
		l.left -= int64(len(p))
	}
	_, l.err = l.w.Write(p)
}

func (l *limitWriter) done() bool { return l.hit || l.err != nil }

// lastLines reads a reader that cannot seek to its end and keeps its last
// n lines (a ring of n).
func lastLines(r io.Reader, n int64) ([]byte, error) {
	if n == 0 {
		_, err := io.Copy(io.Discard, r)
		return nil, err
	}
	ring := make([][]byte, 0, min(n, 1024))
	next := 0
	br := bufio.NewReaderSize(r, readBuffer)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && len(line) <= maxRecord {
			if int64(len(ring)) < n {
				ring = append(ring, line)
			} else {
				ring[next] = line
				next = (next + 1) % len(ring)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	for i := range ring {
		b.Write(ring[(next+i)%len(ring)])
	}
	return b.Bytes(), nil
}
