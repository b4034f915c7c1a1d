package pki

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func parse(t *testing.T, p Pair) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(p.CertPEM)
	if b == nil {
		t.Fatal("no PEM block")
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClientCertCarriesUserAndGroups(t *testing.T) {
	ca, err := NewCA("kstep-ca")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ca.ClientCert(NodeUser("n1"), NodesGroup)
	if err != nil {
		t.Fatal(err)
	}
	c := parse(t, p)
	if c.Subject.CommonName != "system:node:n1" || len(c.Subject.Organization) != 1 || c.Subject.Organization[0] != NodesGroup {
		t.Fatalf("subject %v", c.Subject)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	if _, err := c.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("client cert does not verify against its CA: %v", err)
	}
	if _, err := c.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
		t.Fatal("a client certificate verifies for server auth")
	}
	other, _ := NewCA("other")
	opool := x509.NewCertPool()
	opool.AddCert(other.Cert)
	if _, err := c.Verify(x509.VerifyOptions{Roots: opool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Fatal("client cert verifies against another CA")
	}
}

// TestMutualTLS serves with a serving certificate and calls with a client
// certificate, both from one CA, over a real TLS handshake.
func TestMutualTLS(t *testing.T) {
	ca, err := NewCA("kstep-ca")
	if err != nil {
		t.Fatal(err)
	}
	serving, err := ca.ServingCert("apiserver", "kstep.local", "10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	sc := parse(t, serving)
	if len(sc.IPAddresses) != 3 || len(sc.DNSNames) != 2 {
		t.Fatalf("SANs: ips %v dns %v", sc.IPAddresses, sc.DNSNames)
	}
	client, err := ca.ClientCert(AdminUser, MastersGroup)
	if err != nil {
		t.Fatal(err)
	}
	srvCert, err := tls.X509KeyPair(serving.CertPEM, serving.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CertPEM())
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.TLS.VerifiedChains[0][0].Subject.CommonName)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{srvCert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	defer srv.Close()
	cliCert, err := tls.X509KeyPair(client.CertPEM, client.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cliCert}}}}
	resp, err := hc.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if string(body) != AdminUser {
		t.Fatalf("server saw %q", body)
	}
}
