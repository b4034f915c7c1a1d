package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/apiserver"
)

func TestAPIServerFlagsMapToOptions(t *testing.T) {
	var got apiserver.Options
	cmd := apiserverCmd(func(_ context.Context, o apiserver.Options) error {
		got = o
		return nil
	})
	cmd.SetArgs([]string{
		"--name=apiserver-1",
		"--listen=127.0.0.1:7000",
		"--etcd-servers=http://127.0.0.1:1,http://127.0.0.1:2",
		"--max-request-bytes=1000",
		"--watch-cache-size=10",
		"--bookmark-interval=2s",
		"--etcd-dial-timeout=3s",
	})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want := apiserver.DefaultOptions()
	want.Name = "apiserver-1"
	want.Listen = "127.0.0.1:7000"
	want.EtcdServers = []string{"http://127.0.0.1:1", "http://127.0.0.1:2"}
	want.MaxRequestBytes = 1000
	want.WatchCacheSize = 10
	want.BookmarkInterval = 2 * time.Second
	want.EtcdDialTimeout = 3 * time.Second
	if got.Name != want.Name || got.Listen != want.Listen || !slices.Equal(got.EtcdServers, want.EtcdServers) ||
		got.MaxRequestBytes != want.MaxRequestBytes || got.WatchCacheSize != want.WatchCacheSize ||
		got.BookmarkInterval != want.BookmarkInterval || got.EtcdDialTimeout != want.EtcdDialTimeout {
		t.Errorf("options = %+v, want %+v", got, want)
	}
}

func TestAPIServerDefaultsAreApiserverDefaults(t *testing.T) {
	var got apiserver.Options
	cmd := apiserverCmd(func(_ context.Context, o apiserver.Options) error {
		got = o
		return nil
	})
	cmd.SetArgs([]string{})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want := apiserver.DefaultOptions()
	if got.Name != want.Name || got.Listen != want.Listen || !slices.Equal(got.EtcdServers, want.EtcdServers) ||
		got.MaxRequestBytes != want.MaxRequestBytes || got.WatchCacheSize != want.WatchCacheSize ||
		got.BookmarkInterval != want.BookmarkInterval || got.EtcdDialTimeout != want.EtcdDialTimeout {
		t.Errorf("options without flags = %+v, want DefaultOptions %+v", got, want)
	}
}

func TestAPIServerSecurityFlags(t *testing.T) {
	var got apiserver.Options
	cmd := apiserverCmd(func(_ context.Context, o apiserver.Options) error {
		got = o
		return nil
	})
	cmd.SetArgs([]string{
		"--tls-cert-file=/pki/apiserver.crt",
		"--tls-private-key-file=/pki/apiserver.key",
		"--client-ca-file=/pki/ca.crt",
		"--token-auth-file=/pki/tokens.csv",
		"--authorization-mode=Node,RBAC",
	})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.TLSCertFile != "/pki/apiserver.crt" || got.TLSKeyFile != "/pki/apiserver.key" || got.ClientCAFile != "/pki/ca.crt" ||
		got.TokenAuthFile != "/pki/tokens.csv" || !slices.Equal(got.AuthorizationModes, []string{"Node", "RBAC"}) {
		t.Errorf("options = %+v", got)
	}
	if want := apiserver.DefaultOptions().AuthorizationModes; !slices.Equal(want, []string{apiserver.ModeAlwaysAllow}) {
		t.Errorf("default authorization modes %v, want AlwaysAllow", want)
	}
}
