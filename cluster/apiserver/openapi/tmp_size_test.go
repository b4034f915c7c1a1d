package openapi

import (
	"testing"
	"time"
)

func TestTmpSizes(t *testing.T) {
	start := time.Now()
	s, err := New(testResources())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("New: %v", time.Since(start))
	t.Logf("v2 json %d bytes", len(s.v2.json))
	start = time.Now()
	p, err := s.v2.protobuf()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("v2 proto %d bytes in %v", len(p), time.Since(start))
	for k, d := range s.v3Docs {
		t.Logf("v3 %s: %d", k, len(d.json))
	}
	start = time.Now()
	p, err = s.v3Docs["api/v1"].protobuf()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("v3 core proto %d bytes in %v", len(p), time.Since(start))
}
