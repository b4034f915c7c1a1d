package main

import (
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// deepManagedFields is a ConfigMap whose one managedFields entry's
// fieldsV1 nests depth objects.
func deepManagedFields(name string, depth int) []byte {
	fields := strings.Repeat(`{"f:a":`, depth-1) + "{}" + strings.Repeat("}", depth-1)
	return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","managedFields":[{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":` +
		fields + `}]},"data":{"a":"b"}}`)
}

// finding4: a ConfigMap with fieldsV1 nested 9,994 deep was stored, and
// every JSON list that included it failed "exceeded max depth": kubectl
// get cm -A for the admin, in every output.
func (e *env) finding4() {
	base := e.host + "/api/v1/namespaces/" + e.ns + "/configmaps"
	var code int
	absent := func(name string) func() (string, bool) {
		return func() (string, bool) {
			ctx, cancel := e.ctx()
			defer cancel()
			_, err := e.adminCS.CoreV1().ConfigMaps(e.ns).Get(ctx, name, metav1.GetOptions{})
			return fmt.Sprintf("GET configmaps/%s: not found: %v", name, apierrors.IsNotFound(err)), code == 422 && apierrors.IsNotFound(err)
		}
	}
	e.step("4", "alice", "POST configmaps, managedFields[0].fieldsV1 nested 9,994 deep (60 KB)", func() string {
		var err error
		var b []byte
		code, b, err = do(e.aliceHTTP, "POST", base, "application/json", deepManagedFields("deep", 9994))
		return httpStatus(code, b, err)
	}, absent("deep"))
	var rvBefore string
	e.step("4", "alice", "PUT configmaps/victim, managedFields[0].fieldsV1 nested 9,994 deep", func() string {
		ctx, cancel := e.ctx()
		defer cancel()
		if c, err := e.adminCS.CoreV1().ConfigMaps(e.ns).Get(ctx, "victim", metav1.GetOptions{}); err == nil {
			rvBefore = c.ResourceVersion
		}
		var err error
		var b []byte
		code, b, err = do(e.aliceHTTP, "PUT", base+"/victim", "application/json", deepManagedFields("victim", 9994))
		return httpStatus(code, b, err)
	}, func() (string, bool) {
		ctx, cancel := e.ctx()
		defer cancel()
		c, err := e.adminCS.CoreV1().ConfigMaps(e.ns).Get(ctx, "victim", metav1.GetOptions{})
		if err != nil {
			return err.Error(), false
		}
		return fmt.Sprintf("victim unchanged (resourceVersion %s → %s)", rvBefore, c.ResourceVersion), code == 422 && c.ResourceVersion == rvBefore
	})
	for _, out := range [][]string{nil, {"-o", "json"}, {"-o", "yaml"}, {"-o", "wide"}} {
		var text, exit string
		args := append([]string{"get", "cm", "-A"}, out...)
		e.step("4", "admin", "kubectl "+strings.Join(args, " "), func() string {
			text, exit = e.kubectl(e.kubeconfig, args...)
			return exit
		}, func() (string, bool) {
			n := strings.Count(text, "stored-") // each item's name, once
			return fmt.Sprintf("%d bytes, %d of the %d stored ConfigMaps named", len(text), n, storedConfigMaps),
				exit == "exit 0" && n >= storedConfigMaps && !strings.Contains(text, "max depth")
		})
	}
}
