package apiserver

import (
	"net/http/httptest"
	"slices"
	"testing"
)

// The user an impersonating request is served as, header by header, as
// upstream builds it.
func TestImpersonatedUser(t *testing.T) {
	s := &Server{chain: Chain{Authz: allowAll{}}}
	admin := User{Name: "admin", Groups: []string{"system:masters"}}
	for _, tc := range []struct {
		name    string
		headers map[string][]string
		want    User
		asks    bool
	}{
		{"none", nil, admin, false},
		{"a user", map[string][]string{"Impersonate-User": {"bob"}}, User{Name: "bob", Groups: []string{"system:authenticated"}}, true},
		{"a user and groups", map[string][]string{"Impersonate-User": {"bob"}, "Impersonate-Group": {"a", "b"}},
			User{Name: "bob", Groups: []string{"a", "b", "system:authenticated"}}, true},
		{"unauthenticated groups", map[string][]string{"Impersonate-User": {"bob"}, "Impersonate-Group": {"system:unauthenticated"}},
			User{Name: "bob", Groups: []string{"system:unauthenticated"}}, true},
		{"anonymous", map[string][]string{"Impersonate-User": {"system:anonymous"}}, User{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}}, true},
		{"a service account", map[string][]string{"Impersonate-User": {"system:serviceaccount:ns1:robot"}},
			User{Name: "system:serviceaccount:ns1:robot", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated"}}, true},
		{"not quite a service account", map[string][]string{"Impersonate-User": {"system:serviceaccount:ns1:robot:x"}},
			User{Name: "system:serviceaccount:ns1:robot:x", Groups: []string{"system:authenticated"}}, true},
		{"a uid and extras", map[string][]string{"Impersonate-User": {"bob"}, "Impersonate-Uid": {"7"}, "Impersonate-Extra-Scopes": {"a", "b"}, "Impersonate-Extra-Example.com%2fteam": {"x"}},
			User{Name: "bob", UID: "7", Groups: []string{"system:authenticated"}, Extra: map[string][]string{"scopes": {"a", "b"}, "example.com/team": {"x"}}}, true},
	} {
		r := httptest.NewRequest("GET", "/api/v1/pods", nil)
		for k, vs := range tc.headers {
			r.Header[k] = vs
		}
		got, asks, err := s.impersonate(r, admin)
		if err != nil || asks != tc.asks || got.Name != tc.want.Name || got.UID != tc.want.UID || !slices.Equal(got.Groups, tc.want.Groups) || len(got.Extra) != len(tc.want.Extra) {
			t.Errorf("%s: %+v %v %v, want %+v", tc.name, got, asks, err, tc.want)
			continue
		}
		for k, v := range tc.want.Extra {
			if !slices.Equal(got.Extra[k], v) {
				t.Errorf("%s: extra %s = %v, want %v", tc.name, k, got.Extra[k], v)
			}
		}
		for k := range r.Header {
			if len(k) > 12 && k[:12] == "Impersonate-" {
				t.Errorf("%s: header %s left on the request", tc.name, k)
			}
		}
	}
	r := httptest.NewRequest("GET", "/api/v1/pods", nil)
	r.Header.Set("Impersonate-Uid", "7")
	if _, _, err := s.impersonate(r, admin); statusOf(err).Code != 400 {
		t.Errorf("a uid without a user: %v, want 400", err)
	}
}
