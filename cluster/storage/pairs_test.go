package storage_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kstep-dev/kstep/cluster/storage"
)

// Pairs answer every lookup and every selector as the map they were made
// from, for small sets (scanned) and large ones (searched).
func TestPairsAnswerAsTheirMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	key := func() string { return fmt.Sprintf("k%d", r.IntN(30)) }
	val := func() string { return fmt.Sprintf("v%d", r.IntN(3)) }
	for range 2000 {
		m := map[string]string{}
		for range r.IntN(20) {
			m[key()] = val()
		}
		p := storage.PairsOf(m)
		if p.Len() != len(m) {
			t.Fatalf("%v: Len %d", m, p.Len())
		}
		for range 10 {
			k := key()
			want, wok := m[k]
			got, ok := p.Lookup(k)
			if got != want || ok != wok || p.Has(k) != wok || p.Get(k) != want {
				t.Fatalf("%v: Lookup(%q) = %q, %v; the map has %q, %v", m, k, got, ok, want, wok)
			}
		}
		sel := fmt.Sprintf("%s=%s,%s!=%s,!%s", key(), val(), key(), val(), key())
		ls, err := labels.Parse(sel)
		if err != nil {
			t.Fatal(err)
		}
		if ls.Matches(p) != ls.Matches(labels.Set(m)) {
			t.Fatalf("%v: label selector %q matches the pairs %v, the map %v", m, sel, ls.Matches(p), ls.Matches(labels.Set(m)))
		}
		fs, err := fields.ParseSelector(fmt.Sprintf("%s=%s,%s!=%s", key(), val(), key(), val()))
		if err != nil {
			t.Fatal(err)
		}
		if fs.Matches(p) != fs.Matches(fields.Set(m)) {
			t.Fatalf("%v: field selector %q matches the pairs %v, the map %v", m, fs, fs.Matches(p), fs.Matches(fields.Set(m)))
		}
		q := storage.PairsOf(m)
		if !p.Equal(q) {
			t.Fatalf("%v: equal maps, pairs not equal", m)
		}
		m2 := maps.Clone(m)
		m2[key()] = val()
		if storage.PairsOf(m2).Equal(p) != maps.Equal(m2, m) {
			t.Fatalf("%v and %v: pairs Equal %v", m, m2, !maps.Equal(m2, m))
		}
	}
	if (storage.Pairs{}).Has("") || storage.PairsOf(nil).Len() != 0 {
		t.Fatal("empty pairs have a key")
	}
}
