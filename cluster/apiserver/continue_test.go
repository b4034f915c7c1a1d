package apiserver

import (
	"encoding/base64"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// continueSeed is a continue token made by hand in upstream's format.
func continueSeed(rv, start string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":` + rv + `,"start":"` + start + `"}`))
}

// FuzzContinueToken: every continue token parseContinue accepts, for any
// list prefix, starts strictly inside that prefix at a revision of at
// least 1, and encodes back to a token that reads the same. The seeds hold
// the hand-made tokens: the key /registry/ itself (the old
// "rv:key" text) and upstream-format tokens that climb out with "..".
func FuzzContinueToken(f *testing.F) {
	for _, s := range [][3]string{
		{"5:%2Fregistry%2F", "pods", "alice"},
		{"5:%2Fregistry%2Fsecrets%2F", "services", ""},
		{continueSeed("5", "/registry/"), "pods", "alice"},
		{continueSeed("5", "../../leases/"), "nodes", ""},
		{continueSeed("5", "../secrets/kube-system/"), "serviceaccounts", ""},
		{continueSeed("5", "x/../../y"), "configmaps", "default"},
		{continueSeed("5", "/"), "configmaps", "default"},
		{continueSeed("5", "."), "configmaps", "default"},
		{continueSeed("5", "web\\u0000"), "configmaps", "default"},
		{continueSeed("0", "web\\u0000"), "configmaps", "default"},
		{continueSeed("-3", "web\\u0000"), "configmaps", "default"},
		{continueSeed("5", ""), "configmaps", "default"},
		{"not base64 !", "pods", ""},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, token, res, namespace string) {
		r := &resource{gvr: schema.GroupVersionResource{Version: "v1", Resource: res}, namespaced: namespace != ""}
		prefix := r.prefix(namespace)
		tok, err := parseContinue(token, prefix)
		if err != nil {
			if !strings.Contains(err.Error(), "invalid continue token") {
				t.Fatalf("refusal %v is not the 400's", err)
			}
			return
		}
		if !strings.HasPrefix(tok.Start, prefix) || len(tok.Start) == len(prefix) {
			t.Fatalf("token %q accepted for prefix %q starts at %q, outside it", token, prefix, tok.Start)
		}
		if tok.RV < 1 {
			t.Fatalf("token %q accepted at revision %d", token, tok.RV)
		}
		again, err := tok.encode(prefix)
		if err != nil {
			t.Fatalf("re-encoding %+v: %v", tok, err)
		}
		if back, err := parseContinue(again, prefix); err != nil || back != tok {
			t.Fatalf("token %+v re-encoded as %q reads back as %+v, %v", tok, again, back, err)
		}
	})
}
