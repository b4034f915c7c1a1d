package provider

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.etcd.io/etcd/client/pkg/v3/transport"

	"github.com/kstep-dev/kstep/cluster/pki"
)

// A secure cluster (the default; Topology.Insecure turns it off) has its
// PKI in <state-dir>/pki, on every provider: a CA made at Up, the
// apiservers' serving certificate, and a token file. Kubeconfigs embed a
// client certificate per identity: the admin (kubernetes-admin in
// system:masters), the controller-managers, the schedulers, each real
// node's kubelet (system:node:<name> in system:nodes). Hollow nodes share
// one process and one connection, so each has a bearer token instead
// (hollow-nodes.tokens, also in the apiservers' token file) that the
// hollow-nodes actor sends per node. The kubelets' servers have serving
// certificates for their node names (a real node's, the hollow-nodes
// actor's for all its nodes), and the apiservers a client certificate for
// them (kube-apiserver-kubelet-client). Every actor with an ops port (the
// controller-managers, the schedulers, the hollow-nodes actor, the real
// nodes' kubelets) has a serving certificate for it (ops-<actor>), and
// the port authorizes its callers' client certificates by
// SubjectAccessReview (cluster/opsserver). An insecure cluster has none of
// this, so no kubelet server either, and open ops ports.
//
// etcd has a PKI of its own under pki/etcd, as upstream's (kubeadm's
// etcd/ca): its CA signs the members' client-URL certificates, the
// apiservers' etcd client certificate (kube-apiserver-etcd-client) and
// kstep's operator certificate (kstep-etcd-admin: chaos, link control,
// `kstep etcd recover`), and a second CA (peer-ca) signs only the members'
// peer certificates, so no client certificate opens a peer URL. A
// certificate of the cluster's CA (a controller-manager's, a kubelet's)
// opens neither. The two CAs' keys are never written: nothing issues an
// etcd certificate after Up. Each actor is given only the files its own
// flags name (Component.Files): a member its own two pairs and the two
// CAs, an apiserver its etcd client certificate and etcd's CA; no actor the
// admin certificate, another member's key or the cluster CA's key.

// PKIFiles are the paths of a cluster's PKI.
type PKIFiles struct{ Dir string }

// PKIPaths are the PKI files of the cluster in stateDir.
func PKIPaths(stateDir string) PKIFiles { return PKIFiles{Dir: filepath.Join(stateDir, "pki")} }

func (f PKIFiles) path(name string) string { return filepath.Join(f.Dir, name) }
func (f PKIFiles) caCert() string          { return f.path("ca.crt") }
func (f PKIFiles) caKey() string           { return f.path("ca.key") }
func (f PKIFiles) servingCert() string     { return f.path("apiserver.crt") }
func (f PKIFiles) servingKey() string      { return f.path("apiserver.key") }

// The apiservers' client certificate for the kubelets' servers, and each
// kubelet server's serving certificate (a real node's, or the hollow-nodes
// actor's for all its nodes), valid for the node names: the apiservers
// dial a node's InternalIP with the node's name as the TLS server name.
func (f PKIFiles) kubeletClientCert() string { return f.path("apiserver-kubelet-client.crt") }
func (f PKIFiles) kubeletClientKey() string  { return f.path("apiserver-kubelet-client.key") }
func (f PKIFiles) kubeletServingCert(component string) string {
	return f.path("kubelet-" + component + ".crt")
}
func (f PKIFiles) kubeletServingKey(component string) string {
	return f.path("kubelet-" + component + ".key")
}

// kubeletServerArgs are the flags of a kubelet server (kstep kubelet and
// kstep hollow-nodes alike) listening on listen.
func (f PKIFiles) kubeletServerArgs(component, listen string) []string {
	return []string{
		"--kubelet-listen=" + listen,
		"--tls-cert-file=" + f.kubeletServingCert(component),
		"--tls-private-key-file=" + f.kubeletServingKey(component),
		"--client-ca-file=" + f.caCert(),
	}
}

// The serving certificate of a component's ops port (cluster/opsserver).
func (f PKIFiles) opsServingCert(component string) string { return f.path("ops-" + component + ".crt") }
func (f PKIFiles) opsServingKey(component string) string  { return f.path("ops-" + component + ".key") }

// opsArgs are the flags that make a component's ops port (--metrics-listen)
// a secure one.
func (f PKIFiles) opsArgs(component string) []string {
	return []string{
		"--metrics-tls-cert-file=" + f.opsServingCert(component),
		"--metrics-tls-private-key-file=" + f.opsServingKey(component),
		"--metrics-client-ca-file=" + f.caCert(),
	}
}

// hasOpsPort reports whether c serves an ops port (cluster/opsserver). An
// etcd member's metrics URL is etcd's own, plain and keyless, not one.
func (c Component) hasOpsPort() bool {
	if c.Role == RoleEtcd {
		return false
	}
	_, metrics := c.Ports[PortMetrics]
	_, kubelet := c.Ports[PortKubelet]
	return metrics || kubelet
}

// etcd's PKI (pki/etcd).
func (f PKIFiles) etcdDir() string                 { return f.path("etcd") }
func (f PKIFiles) etcdFile(name string) string     { return filepath.Join(f.etcdDir(), name) }
func (f PKIFiles) etcdCA() string                  { return f.etcdFile("ca.crt") }
func (f PKIFiles) etcdPeerCA() string              { return f.etcdFile("peer-ca.crt") }
func (f PKIFiles) etcdServer(m, ext string) string { return f.etcdFile(m + ext) }
func (f PKIFiles) etcdPeer(m, ext string) string   { return f.etcdFile(m + "-peer" + ext) }
func (f PKIFiles) apiserverEtcdClient(ext string) string {
	return f.etcdFile("apiserver-etcd-client" + ext)
}

// EtcdDir is the directory of the cluster's etcd PKI, which only etcd
// members and apiservers may see.
func (f PKIFiles) EtcdDir() string { return f.etcdDir() }

// Files are the files of the state directory stateDir (as c sees it) that
// c's argv names: its certificates, keys, token files and kubeconfig, in
// argv order, each once. They are all c may read there (least privilege):
// the docker provider mounts these alone into c's container, read-only,
// and the process provider passes no other. A value is found anywhere in
// an argument after an "=" (--kubelet-arg=--tls-cert-file=<path>) or as
// the argument itself (--flag <path>), so an extra flag of the
// topology's that names such a file brings it along.
func (c Component) Files(stateDir string) []string {
	dirs := []string{PKIPaths(stateDir).Dir + string(filepath.Separator),
		filepath.Dir(componentKubeconfig(stateDir, c.Name)) + string(filepath.Separator)}
	var out []string
	for _, arg := range c.Args {
		for v := arg; ; {
			if p := filepath.Clean(v); slices.ContainsFunc(dirs, func(d string) bool { return strings.HasPrefix(p, d) }) && !slices.Contains(out, p) {
				out = append(out, p)
			}
			_, rest, ok := strings.Cut(v, "=")
			if !ok {
				break
			}
			v = rest
		}
	}
	return out
}

// EtcdAdmin are the CA, certificate and key of kstep-etcd-admin, kstep's
// operator identity toward etcd (etcdctl's --cacert, --cert, --key).
func (f PKIFiles) EtcdAdmin() (ca, cert, key string) {
	return f.etcdCA(), f.etcdFile("admin.crt"), f.etcdFile("admin.key")
}

// etcdArgs are the flags that put member m behind TLS: certificates on
// its client and peer URLs, each taking only its own CA's clients, and
// its link control only for kstep-etcd-admin.
func (f PKIFiles) etcdArgs(m string) []string {
	return []string{
		"--cert-file=" + f.etcdServer(m, ".crt"), "--key-file=" + f.etcdServer(m, ".key"),
		"--trusted-ca-file=" + f.etcdCA(), "--client-cert-auth",
		"--peer-cert-file=" + f.etcdPeer(m, ".crt"), "--peer-key-file=" + f.etcdPeer(m, ".key"),
		"--peer-trusted-ca-file=" + f.etcdPeerCA(), "--peer-client-cert-auth",
		"--link-control-cn=" + pki.EtcdAdminUser,
	}
}

// apiserverEtcdArgs are an apiserver's etcd client flags (upstream's).
func (f PKIFiles) apiserverEtcdArgs() []string {
	return []string{"--etcd-cafile=" + f.etcdCA(),
		"--etcd-certfile=" + f.apiserverEtcdClient(".crt"), "--etcd-keyfile=" + f.apiserverEtcdClient(".key")}
}

// EtcdAdminTLS is the TLS of kstep's operator paths toward the etcd
// members in actors (their client URLs and link control): the
// kstep-etcd-admin certificate of the cluster in stateDir, trusting its
// etcd CA; nil when the members serve plain http (an insecure cluster).
func EtcdAdminTLS(stateDir string, actors []Actor) (*tls.Config, error) {
	secure := false
	for _, a := range actors {
		if a.Role == RoleEtcd && strings.HasPrefix(a.Endpoint, "https://") {
			secure = true
		}
	}
	if !secure {
		return nil, nil
	}
	ca, cert, key := PKIPaths(stateDir).EtcdAdmin()
	cfg, err := (transport.TLSInfo{CertFile: cert, KeyFile: key, TrustedCAFile: ca}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("etcd admin certificate: %w", err)
	}
	return cfg, nil
}

// writeEtcdPKI issues etcd's PKI for the members in cs: each a
// certificate for its client URL and one for its peer URL, valid for
// 127.0.0.1 and its name (its host on the docker network), and the
// apiservers' and kstep's client certificates.
func writeEtcdPKI(f PKIFiles, cs []Component) error {
	ca, err := pki.NewCA("kstep-etcd-ca")
	if err != nil {
		return err
	}
	peerCA, err := pki.NewCA("kstep-etcd-peer-ca")
	if err != nil {
		return err
	}
	type out struct {
		issue     func() (pki.Pair, error)
		cert, key string
	}
	outs := []out{
		{func() (pki.Pair, error) { return pki.Pair{CertPEM: ca.CertPEM()}, nil }, f.etcdCA(), ""},
		{func() (pki.Pair, error) { return pki.Pair{CertPEM: peerCA.CertPEM()}, nil }, f.etcdPeerCA(), ""},
		{func() (pki.Pair, error) { return ca.ClientCert(pki.APIServerEtcdClientUser) },
			f.apiserverEtcdClient(".crt"), f.apiserverEtcdClient(".key")},
	}
	_, adminCert, adminKey := f.EtcdAdmin()
	outs = append(outs, out{func() (pki.Pair, error) { return ca.ClientCert(pki.EtcdAdminUser) }, adminCert, adminKey})
	for _, c := range cs {
		if c.Role != RoleEtcd {
			continue
		}
		outs = append(outs,
			out{func() (pki.Pair, error) { return ca.PeerCert(c.Name, c.Name) }, f.etcdServer(c.Name, ".crt"), f.etcdServer(c.Name, ".key")},
			out{func() (pki.Pair, error) { return peerCA.PeerCert(c.Name, c.Name) }, f.etcdPeer(c.Name, ".crt"), f.etcdPeer(c.Name, ".key")})
	}
	if err := os.MkdirAll(f.etcdDir(), 0o755); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	for _, o := range outs {
		pair, err := o.issue()
		if err != nil {
			return err
		}
		if o.key == "" {
			if err := os.WriteFile(o.cert, pair.CertPEM, 0o644); err != nil {
				return fmt.Errorf("pki: %w", err)
			}
			continue
		}
		if err := pair.Write(o.cert, o.key); err != nil {
			return err
		}
	}
	return nil
}

// tokens is the apiservers' token file; HollowTokens the hollow-nodes
// actor's share of it.
func (f PKIFiles) tokens() string { return f.path("tokens.csv") }

// HollowTokens is the hollow-nodes actor's token file (node,token lines).
func (f PKIFiles) HollowTokens() string { return f.path("hollow-nodes.tokens") }

// apiserverArgs are the flags that make an apiserver secure.
func (f PKIFiles) apiserverArgs() []string {
	return []string{
		"--tls-cert-file=" + f.servingCert(),
		"--tls-private-key-file=" + f.servingKey(),
		"--client-ca-file=" + f.caCert(),
		"--token-auth-file=" + f.tokens(),
		"--authorization-mode=Node,RBAC",
		"--kubelet-client-certificate=" + f.kubeletClientCert(),
		"--kubelet-client-key=" + f.kubeletClientKey(),
		"--kubelet-certificate-authority=" + f.caCert(),
	}
}

// WritePKI creates the cluster's CA, the apiservers' serving certificate
// (valid for 127.0.0.1, localhost and every apiserver's host name in the
// plan: hosts), the ops ports' and the kubelet servers' serving certificates and the
// apiservers' client certificate for them, and the token files (the hollow nodes' tokens and users'
// lines). Client certificates are issued with the kubeconfigs.
func WritePKI(stateDir string, cs []Component, hosts, users []string) error {
	f := PKIPaths(stateDir)
	if err := os.RemoveAll(f.Dir); err != nil {
		return fmt.Errorf("clear old pki: %w", err)
	}
	ca, err := pki.NewCA("kstep-ca")
	if err != nil {
		return err
	}
	if err := ca.Pair().Write(f.caCert(), f.caKey()); err != nil {
		return err
	}
	if err := writeEtcdPKI(f, cs); err != nil {
		return err
	}
	serving, err := ca.ServingCert("kstep-apiserver", hosts...)
	if err != nil {
		return err
	}
	if err := serving.Write(f.servingCert(), f.servingKey()); err != nil {
		return err
	}
	client, err := ca.ClientCert(pki.APIServerKubeletClientUser)
	if err != nil {
		return err
	}
	if err := client.Write(f.kubeletClientCert(), f.kubeletClientKey()); err != nil {
		return err
	}
	for _, c := range cs {
		if !c.hasOpsPort() {
			continue
		}
		// The component's name is its host on the docker provider's
		// network; the host reaches it on 127.0.0.1.
		pair, err := ca.ServingCert("ops-"+c.Name, c.Name)
		if err != nil {
			return err
		}
		if err := pair.Write(f.opsServingCert(c.Name), f.opsServingKey(c.Name)); err != nil {
			return err
		}
	}
	for _, c := range cs {
		var names []string
		switch c.Role {
		case RoleNode:
			names = []string{c.Name}
		case RoleHollowNodes:
			names = c.HollowNodes
		default:
			continue
		}
		pair, err := ca.ServingCert("kubelet-"+c.Name, names...)
		if err != nil {
			return err
		}
		if err := pair.Write(f.kubeletServingCert(c.Name), f.kubeletServingKey(c.Name)); err != nil {
			return err
		}
	}
	var lines []string
	for _, c := range cs {
		for _, node := range c.HollowNodes {
			tok, err := newToken()
			if err != nil {
				return err
			}
			lines = append(lines, fmt.Sprintf("%s,%s,%s,%q", tok, pki.NodeUser(node), pki.NodeUser(node), pki.NodesGroup))
		}
	}
	for path, lines := range map[string][]string{f.HollowTokens(): lines, f.tokens(): append(lines, users...)} {
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return nil
}

func newToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// issuer issues client credentials from a cluster's CA; a nil issuer (an
// insecure cluster) issues empty ones.
type issuer struct {
	ca *pki.CA
}

func loadIssuer(stateDir string, secure bool) (*issuer, error) {
	if !secure {
		return nil, nil
	}
	f := PKIPaths(stateDir)
	ca, err := pki.LoadCA(f.caCert(), f.caKey())
	if err != nil {
		return nil, err
	}
	return &issuer{ca: ca}, nil
}

func (is *issuer) credentials(user string, groups ...string) (credentials, error) {
	if is == nil {
		return credentials{}, nil
	}
	pair, err := is.ca.ClientCert(user, groups...)
	if err != nil {
		return credentials{}, err
	}
	return credentials{CA: is.ca.CertPEM(), Cert: pair.CertPEM, Key: pair.KeyPEM}, nil
}

// componentCredentials: the component's own certificate, or for hollow
// nodes only the CA (their tokens travel separately).
func (is *issuer) componentCredentials(c Component) (credentials, error) {
	if is == nil {
		return credentials{}, nil
	}
	if c.User == "" {
		return credentials{CA: is.ca.CertPEM()}, nil
	}
	return is.credentials(c.User, c.Groups...)
}
