package apiserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// The audit log: one audit.k8s.io/v1 Event per resource request, written
// at ResponseComplete as a JSON line, with the user who authenticated and,
// for an impersonating request, the one it was served as. Levels: None,
// Metadata (who, what, when, the answer's code), Request (and the request
// body, when JSON).
// Every request gets an Audit-ID response header (the client's own, if it
// sent one), whether or not it is logged.
//
// Writing is off the request path: events go into a bounded buffer that one
// goroutine drains into the file; when the buffer is full the event is
// dropped and counted (apiserver_audit_events_dropped_total), never waited
// for. A slow disk costs audit events, not request latency.

// Audit levels.
const (
	AuditNone     = "None"
	AuditMetadata = "Metadata"
	AuditRequest  = "Request"
)

// auditEvent is audit.k8s.io/v1 Event with the fields kstep fills (the same
// JSON names; k8s.io/apiserver is not a dependency).
type auditEvent struct {
	Kind                     string            `json:"kind"`
	APIVersion               string            `json:"apiVersion"`
	Level                    string            `json:"level"`
	AuditID                  string            `json:"auditID"`
	Stage                    string            `json:"stage"`
	RequestURI               string            `json:"requestURI"`
	Verb                     string            `json:"verb"`
	User                     auditUser         `json:"user"`
	ImpersonatedUser         *auditUser        `json:"impersonatedUser,omitempty"`
	SourceIPs                []string          `json:"sourceIPs,omitempty"`
	UserAgent                string            `json:"userAgent,omitempty"`
	ObjectRef                *auditObjectRef   `json:"objectRef,omitempty"`
	ResponseStatus           *metav1.Status    `json:"responseStatus,omitempty"`
	RequestObject            json.RawMessage   `json:"requestObject,omitempty"`
	RequestReceivedTimestamp metav1.MicroTime  `json:"requestReceivedTimestamp"`
	StageTimestamp           metav1.MicroTime  `json:"stageTimestamp"`
	Annotations              map[string]string `json:"annotations,omitempty"`
}

type auditUser struct {
	Username string              `json:"username"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

func toAuditUser(u User) auditUser {
	return auditUser{Username: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
}

type auditObjectRef struct {
	Resource    string `json:"resource,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name,omitempty"`
	APIGroup    string `json:"apiGroup,omitempty"`
	APIVersion  string `json:"apiVersion,omitempty"`
	Subresource string `json:"subresource,omitempty"`
}

// auditLog is the buffered, non-blocking audit writer.
type auditLog struct {
	level string
	ch    chan *auditEvent
	done  chan struct{}
	// mu guards closed: a handler that outlives shutdown must not send
	// on the closed channel.
	mu      sync.RWMutex
	closed  bool
	f       *os.File
	events  prometheus.Counter
	dropped prometheus.Counter
}

const auditBuffer = 10000

func openAudit(path, level string, reg prometheus.Registerer) (*auditLog, error) {
	a := &auditLog{
		level: level,
		events: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "apiserver_audit_event_total", Help: "Audit events handed to the audit log.",
		}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "apiserver_audit_events_dropped_total", Help: "Audit events dropped because the audit buffer was full.",
		}),
	}
	reg.MustRegister(a.events, a.dropped)
	switch level {
	case AuditNone, AuditMetadata, AuditRequest:
	default:
		return nil, fmt.Errorf("audit level %q: want None, Metadata or Request", level)
	}
	if path == "" || level == AuditNone {
		a.level = AuditNone
		return a, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	a.f, a.ch, a.done = f, make(chan *auditEvent, auditBuffer), make(chan struct{})
	go a.drain()
	return a, nil
}

func (a *auditLog) drain() {
	defer close(a.done)
	w := bufio.NewWriterSize(a.f, 64<<10)
	enc := json.NewEncoder(w)
	for ev := range a.ch {
		_ = enc.Encode(ev)
		if len(a.ch) == 0 {
			_ = w.Flush()
		}
	}
	_ = w.Flush()
	_ = a.f.Close()
}

// Close flushes what is buffered and closes the file.
func (a *auditLog) Close() {
	if a == nil || a.ch == nil {
		return
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	a.closed = true
	close(a.ch)
	a.mu.Unlock()
	<-a.done
}

func (a *auditLog) emit(ev *auditEvent) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.closed {
		a.dropped.Inc()
		return
	}
	select {
	case a.ch <- ev:
		a.events.Inc()
	default:
		a.dropped.Inc()
	}
}

// auditRecordKey carries, from the audit wrapper down the chain, what the
// audit event learns only later: whom an impersonating request is served
// as (authorizeRequest runs inside the audit wrapper, so that refused
// impersonations are logged too).
type auditRecordKey struct{}

type auditRecord struct {
	mu           sync.Mutex
	impersonated *User
}

// auditImpersonation records that the request of ctx is served as u.
func auditImpersonation(ctx context.Context, u User) {
	if rec, ok := ctx.Value(auditRecordKey{}).(*auditRecord); ok {
		rec.mu.Lock()
		rec.impersonated = &u
		rec.mu.Unlock()
	}
}

func impersonatedFrom(ctx context.Context) *User {
	rec, ok := ctx.Value(auditRecordKey{}).(*auditRecord)
	if !ok {
		return nil
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.impersonated
}

// bodyTap keeps a copy of the request body as the handler reads it.
type bodyTap struct {
	io.ReadCloser
	buf   bytes.Buffer
	limit int
}

func (t *bodyTap) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if room := t.limit - t.buf.Len(); room > 0 {
		t.buf.Write(p[:min(n, room)])
	}
	return n, err
}

// audit wraps next: it sets Audit-ID and, when the log is on, records the
// request once it is answered. Only resource requests are logged.
func (a *auditLog) audit(maxBody int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Audit-ID")
		if id == "" {
			id = string(uuid.NewUUID())
		}
		w.Header().Set("Audit-ID", id)
		if a.level == AuditNone {
			next.ServeHTTP(w, r)
			return
		}
		ri, ok := parseRequestInfo(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		received := time.Now()
		r = r.WithContext(context.WithValue(r.Context(), auditRecordKey{}, &auditRecord{}))
		var tap *bodyTap
		if a.level == AuditRequest && r.Body != nil && r.Body != http.NoBody && ri.Verb != "get" && ri.Verb != "list" && ri.Verb != "watch" {
			tap = &bodyTap{ReadCloser: r.Body, limit: int(maxBody)}
			r.Body = tap
		}
		rec := &recorder{ResponseWriter: w}
		if ri.Verb == "watch" {
			// A watch is logged when its response starts: it may last for
			// hours.
			rec.started = func(code int) { a.emit(a.event(r, ri, id, received, code, nil)) }
			next.ServeHTTP(rec, r)
			return
		}
		next.ServeHTTP(rec, r)
		var body []byte
		if tap != nil && json.Valid(tap.buf.Bytes()) {
			body = tap.buf.Bytes()
		}
		a.emit(a.event(r, ri, id, received, rec.code, body))
	})
}

func (a *auditLog) event(r *http.Request, ri *requestInfo, id string, received time.Time, code int, body []byte) *auditEvent {
	u, _ := userFrom(r.Context())
	if code == 0 {
		code = http.StatusOK
	}
	stage := "ResponseComplete"
	if ri.Verb == "watch" {
		stage = "ResponseStarted"
	}
	ev := &auditEvent{
		Kind: "Event", APIVersion: "audit.k8s.io/v1", Level: a.level, AuditID: id, Stage: stage,
		RequestURI: r.URL.RequestURI(), Verb: ri.Verb,
		User:      toAuditUser(u),
		UserAgent: r.UserAgent(),
		ObjectRef: &auditObjectRef{Resource: ri.Resource, Namespace: ri.Namespace, Name: ri.Name,
			APIGroup: ri.Group, APIVersion: ri.Version, Subresource: ri.Subresource},
		ResponseStatus:           &metav1.Status{Code: int32(code)},
		RequestReceivedTimestamp: metav1.NewMicroTime(received),
		StageTimestamp:           metav1.NewMicroTime(time.Now()),
	}
	if as := impersonatedFrom(r.Context()); as != nil {
		// As upstream: user is who authenticated, impersonatedUser whom
		// the request was served as.
		iu := toAuditUser(*as)
		ev.ImpersonatedUser = &iu
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		ev.SourceIPs = []string{host}
	}
	if len(body) > 0 {
		ev.RequestObject = json.RawMessage(bytes.Clone(body))
	}
	return ev
}
