package apiserver

import (
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The request-header limit. A request's line and headers may take
// Options.MaxHeaderBytes (128 KiB by default: a label selector of about
// 100,000 characters); past it the answer is a 431 Status, the same over
// HTTP/1.1 and HTTP/2.
//
// net/http enforces Server.MaxHeaderBytes itself, but not in a way a client
// can rely on: over HTTP/1.1 it answers 431 without reading the rest of the
// headers, so a client still writing them often sees a reset connection
// instead; over HTTP/2 it advertises the limit, and Go's client (kubectl's)
// then refuses to send the request at all. So the transport accepts
// transportHeaderBytes, and limitHeaders answers past MaxHeaderBytes once
// the headers are read. Beyond the transport's limit net/http's own 431
// stands.

// transportHeaderBytes is what the HTTP server reads of a request's
// headers: net/http's default, 8 times kstep's limit.
func transportHeaderBytes(limit int) int {
	return max(limit*8, http.DefaultMaxHeaderBytes)
}

// headerBytes is the size of r's request line and headers as HTTP/1.1
// sends them (HTTP/2's are counted the same way, decoded).
func headerBytes(r *http.Request) int {
	n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + 4 + len("Host: \r\n") + len(r.Host)
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// limitHeaders answers 431 to a request whose headers pass limit.
func limitHeaders(limit int, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := headerBytes(r); n > limit {
			if r.ProtoMajor == 1 {
				w.Header().Set("Connection", "close")
			}
			writeStatus(w, &metav1.Status{Code: http.StatusRequestHeaderFieldsTooLarge, Reason: reasonHeadersTooLarge,
				Message: fmt.Sprintf("the request line and headers are %d bytes, over the limit of %d", n, limit)})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// reasonHeadersTooLarge is the Status reason of a 431; metav1 has none.
const reasonHeadersTooLarge metav1.StatusReason = "RequestHeaderFieldsTooLarge"
