package apiserver

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// The kubelet client: how the apiserver reaches a node's kubelet server for
// pods/log, exec, attach, portforward, nodes/proxy and the metrics API. It
// presents its own client certificate (--kubelet-client-certificate, user
// pki.APIServerKubeletClientUser, which the kubelet authorizes by asking
// this apiserver a SubjectAccessReview) and verifies the kubelet's serving
// certificate against --kubelet-certificate-authority with the node's name
// as the TLS server name: several nodes may share one address and port (a
// hollow-nodes process), and the name is what tells them apart.

// defaultKubeletPort is where a kubelet serves when its Node does not say
// (upstream's --port default).
const defaultKubeletPort = 10250

// maxKubeletTransports bounds the per-node transports kept: past it they
// are all dropped (their idle connections closed) and made again on use.
const maxKubeletTransports = 4096

var errNoKubeletClient = apierrors.NewServiceUnavailable("the apiserver has no kubelet client: start it with --kubelet-client-certificate, --kubelet-client-key and --kubelet-certificate-authority")

type kubeletClient struct {
	cert  tls.Certificate
	roots *x509.CertPool

	mu         sync.Mutex
	transports map[string]*http.Transport // by node name
}

// newKubeletClient reads the kubelet client options; nil without them.
func newKubeletClient(o Options) (*kubeletClient, error) {
	if o.KubeletClientCertFile == "" && o.KubeletClientKeyFile == "" && o.KubeletCAFile == "" {
		return nil, nil
	}
	if o.KubeletClientCertFile == "" || o.KubeletClientKeyFile == "" || o.KubeletCAFile == "" {
		return nil, errors.New("--kubelet-client-certificate, --kubelet-client-key and --kubelet-certificate-authority go together")
	}
	cert, err := tls.LoadX509KeyPair(o.KubeletClientCertFile, o.KubeletClientKeyFile)
	if err != nil {
		return nil, fmt.Errorf("kubelet client certificate: %w", err)
	}
	pem, err := os.ReadFile(o.KubeletCAFile)
	if err != nil {
		return nil, fmt.Errorf("kubelet certificate authority: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("kubelet certificate authority %s: no certificate found", o.KubeletCAFile)
	}
	return &kubeletClient{cert: cert, roots: roots, transports: map[string]*http.Transport{}}, nil
}

// transport is the round tripper toward node's kubelet: HTTP/1.1 (the
// upgrades of exec, attach and port-forward need it), the client
// certificate, and the kubelet's certificate verified for the node's name.
func (k *kubeletClient) transport(node string) *http.Transport {
	k.mu.Lock()
	defer k.mu.Unlock()
	if t, ok := k.transports[node]; ok {
		return t
	}
	if len(k.transports) >= maxKubeletTransports {
		for _, t := range k.transports {
			t.CloseIdleConnections()
		}
		clear(k.transports)
	}
	t := &http.Transport{
		DialContext: (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig: &tls.Config{
			Certificates: []tls.Certificate{k.cert},
			RootCAs:      k.roots,
			ServerName:   node,
			MinVersion:   tls.VersionTLS12,
		},
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
	k.transports[node] = t
	return t
}

// kubeletLocation is where node's kubelet serves, from the Node in the
// watch cache: its InternalIP (else its first address) and the port in
// status.daemonEndpoints.kubeletEndpoint; and the transport to reach it.
func (s *Server) kubeletLocation(node string) (*url.URL, http.RoundTripper, error) {
	if s.kubelets == nil {
		return nil, nil, errNoKubeletClient
	}
	nodes := s.resources[corev1.SchemeGroupVersion.WithResource("nodes")]
	e, ok := s.cacher(nodes).Get(nodes.key("", node))
	if !ok {
		return nil, nil, apierrors.NewNotFound(nodes.gvr.GroupResource(), node)
	}
	host, err := kubeletHost(e.Object().(*corev1.Node))
	if err != nil {
		return nil, nil, err
	}
	return &url.URL{Scheme: "https", Host: host}, s.kubelets.transport(node), nil
}

func kubeletHost(n *corev1.Node) (string, error) {
	addr := ""
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && a.Address != "" {
			addr = a.Address
			break
		}
	}
	if addr == "" {
		for _, a := range n.Status.Addresses {
			if a.Address != "" {
				addr = a.Address
				break
			}
		}
	}
	if addr == "" {
		return "", apierrors.NewServiceUnavailable(fmt.Sprintf("node %q has no address in its status: its kubelet cannot be reached", n.Name))
	}
	port := int(n.Status.DaemonEndpoints.KubeletEndpoint.Port)
	if port <= 0 || port > 65535 {
		port = defaultKubeletPort
	}
	return net.JoinHostPort(addr, strconv.Itoa(port)), nil
}
