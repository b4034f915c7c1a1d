package openapi

import (
	"os"
	"testing"
)

func TestTmpDump(t *testing.T) {
	s, err := New(testResources())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile("/tmp/v2.json", s.v2.json, 0644)
	os.WriteFile("/tmp/apps.json", s.v3Docs["apis/apps/v1"].json, 0644)
	os.WriteFile("/tmp/core.json", s.v3Docs["api/v1"].json, 0644)
	os.WriteFile("/tmp/index.json", s.v3Index.json, 0644)
}
