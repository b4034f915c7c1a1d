package etcd

import (
	"bufio"
	"strings"
	"testing"
)

func TestPeerSenders(t *testing.T) {
	s := peerSenders("etcd-0=http://etcd-0:2381,etcd-1=http://etcd-1:2381")
	head := "POST /raft HTTP/1.1\r\nHost: etcd-0:2381\r\nX-Peerurls: http://etcd-1:2381\r\nContent-Length: 600\r\n\r\n" + strings.Repeat("x", 600)
	if got := s.Identify(bufio.NewReaderSize(strings.NewReader(head), 32<<10)); got != "etcd-1" {
		t.Errorf("Identify: %q, want etcd-1", got)
	}
	probe := "GET /raft/probing HTTP/1.1\r\nHost: etcd-0:2381\r\n\r\n"
	if got := s.Identify(bufio.NewReaderSize(strings.NewReader(probe), 32<<10)); got != "" {
		t.Errorf("a probe names %q", got)
	}
	// A later request on a connection a probe opened.
	if got := s.Reidentify([]byte(head)); got != "etcd-1" {
		t.Errorf("Reidentify: %q, want etcd-1", got)
	}
	if got := s.Reidentify([]byte(probe)); got != "" {
		t.Errorf("Reidentify of a probe: %q", got)
	}
	if got := s.Reidentify([]byte("POST /raft HTTP/1.1\r\nX-PeerURLs: http://elsewhere:1\r\n\r\n")); got != "" {
		t.Errorf("an unknown peer URL names %q", got)
	}
}
