package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// The built-in identities and groups, upstream's names.
const (
	// MastersGroup is the superuser group: bound to cluster-admin.
	MastersGroup = "system:masters"
	// NodesGroup holds every kubelet.
	NodesGroup = "system:nodes"
	// NodeUserPrefix + node name is a kubelet's user name.
	NodeUserPrefix = "system:node:"
	// MonitoringGroup may read /metrics.
	MonitoringGroup = "system:monitoring"
	// AdminUser is the admin kubeconfig's user (group MastersGroup).
	AdminUser = "kubernetes-admin"
	// ControllerManagerUser and SchedulerUser are the control-plane actors.
	ControllerManagerUser = "system:kube-controller-manager"
	SchedulerUser         = "system:kube-scheduler"
	// APIServerKubeletClientUser is the apiservers' identity toward the
	// kubelets' servers (upstream kubeadm's), which the kubelets authorize
	// by SubjectAccessReview: the bootstrap policy binds it to
	// system:kubelet-api-admin.
	APIServerKubeletClientUser = "kube-apiserver-kubelet-client"
	// APIServerEtcdClientUser is the apiservers' identity toward etcd
	// (upstream kubeadm's apiserver-etcd-client), and EtcdAdminUser
	// kstep's operator paths' (chaos, link control, etcd recover): both
	// issued by the cluster's etcd CA, which signs nothing else but the
	// members' own certificates.
	APIServerEtcdClientUser = "kube-apiserver-etcd-client"
	EtcdAdminUser           = "kstep-etcd-admin"
)

// NodeUser is the user name of the kubelet of node.
func NodeUser(node string) string { return NodeUserPrefix + node }

// Validity is how long issued certificates last.
const Validity = 10 * 365 * 24 * time.Hour

// Pair is a certificate and its private key, PEM-encoded.
type Pair struct {
	CertPEM []byte
	KeyPEM  []byte
}

// Write writes the pair to certPath and keyPath (the key mode 0600),
// creating their directories.
func (p Pair) Write(certPath, keyPath string) error {
	for path, data := range map[string][]byte{certPath: p.CertPEM, keyPath: p.KeyPEM} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("pki: %w", err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return fmt.Errorf("pki: %w", err)
		}
	}
	return nil
}

// CA is a certificate authority that signs the cluster's certificates.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pair Pair
}

// NewCA creates a self-signed CA named cn.
func NewCA(cn string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pki: CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(Validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("pki: CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("pki: CA certificate: %w", err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, key: key, pair: Pair{CertPEM: encodeCert(der), KeyPEM: keyPEM}}, nil
}

// Pair is the CA's own certificate and key.
func (ca *CA) Pair() Pair { return ca.pair }

// CertPEM is the CA certificate: what clients and servers trust.
func (ca *CA) CertPEM() []byte { return ca.pair.CertPEM }

// ServingCert issues a TLS server certificate valid for 127.0.0.1, ::1,
// localhost and hosts (names or IP addresses).
func (ca *CA) ServingCert(cn string, hosts ...string) (Pair, error) {
	return ca.hostCert(cn, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, hosts)
}

// PeerCert issues a certificate that both serves and dials, valid for the
// same hosts as ServingCert: an etcd member's, which serves its peers and
// clients and presents itself to the peers it dials (and, for its client
// URL, to its own gRPC gateway), as upstream's etcd server and peer
// certificates do.
func (ca *CA) PeerCert(cn string, hosts ...string) (Pair, error) {
	return ca.hostCert(cn, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, hosts)
}

func (ca *CA) hostCert(cn string, usage []x509.ExtKeyUsage, hosts []string) (Pair, error) {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: usage,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:    []string{"localhost"},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return ca.issue(tmpl)
}

// ClientCert issues a TLS client certificate for user in groups.
func (ca *CA) ClientCert(user string, groups ...string) (Pair, error) {
	return ca.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

func (ca *CA) issue(tmpl *x509.Certificate) (Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, fmt.Errorf("pki: key for %q: %w", tmpl.Subject.CommonName, err)
	}
	now := time.Now()
	tmpl.SerialNumber = serial()
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(Validity)
	tmpl.BasicConstraintsValid = true
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return Pair{}, fmt.Errorf("pki: certificate for %q: %w", tmpl.Subject.CommonName, err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return Pair{}, err
	}
	return Pair{CertPEM: encodeCert(der), KeyPEM: keyPEM}, nil
}

// serial is a random 128-bit serial number, as RFC 5280 recommends.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		panic(fmt.Sprintf("pki: crypto/rand: %v", err)) // crypto/rand never fails on supported platforms
	}
	return n
}

func encodeCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("pki: encode key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// LoadCA reads a CA written with Pair().Write, to issue more certificates
// for an existing cluster.
func LoadCA(certFile, keyFile string) (*CA, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("pki: %w", err)
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("pki: %s or %s holds no PEM block", certFile, keyFile)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("pki: %s: %w", certFile, err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("pki: %s: %w", keyFile, err)
	}
	return &CA{Cert: cert, key: key, pair: Pair{CertPEM: certPEM, KeyPEM: keyPEM}}, nil
}
