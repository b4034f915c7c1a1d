package main

import (
	"testing"

	"k8s.io/client-go/rest"
)

// TestPerNodeTransport: every hollow node's client gets a transport (and
// so a connection) of its own, with or without the failover dialer; plain
// rest.HTTPClientFor of one config shares client-go's cached transport.
func TestPerNodeTransport(t *testing.T) {
	for _, name := range []string{"no dialer (one apiserver)", "TLS config"} {
		rc := &rest.Config{Host: "http://127.0.0.1:1"}
		if name == "TLS config" {
			rc = &rest.Config{Host: "https://127.0.0.1:1", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
		}
		shared1, err := rest.HTTPClientFor(rc)
		if err != nil {
			t.Fatal(err)
		}
		shared2, _ := rest.HTTPClientFor(rc)
		if shared1.Transport != shared2.Transport {
			t.Fatalf("%s: client-go no longer shares equal configs' transports; the test's premise is gone", name)
		}
		a, err := rest.HTTPClientFor(perNodeTransport(rc))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := rest.HTTPClientFor(perNodeTransport(rc))
		if a.Transport == b.Transport || a.Transport == shared1.Transport {
			t.Errorf("%s: two nodes share one transport", name)
		}
		if rc.Dial != nil {
			t.Errorf("%s: perNodeTransport changed the caller's config", name)
		}
	}
}
