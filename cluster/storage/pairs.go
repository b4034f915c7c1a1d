package storage

import (
	"slices"
	"sort"
)

// Pairs are string keys and values sorted by key: an object's labels or
// its selectable fields as the watch cache keeps them for every version it
// holds, and what label and field selectors read (it is both
// labels.Labels and fields.Fields).
//
// Every version of every object holds two of them, so they are a slice,
// not a map: a pod's ten selectable fields in 344 bytes where a map held
// about 620, and its two labels in 88 where the decoded map held about
// 310 (pprof at 10,000 pods: 33 MB of maps, a fifth of the live heap). A
// lookup scans at most a few keys, as a map of that size does.
type Pairs struct {
	kv []string // key, value, key, value, ... sorted by key, keys unique
}

// PairsOf copies m into Pairs, sharing its strings.
func PairsOf(m map[string]string) Pairs {
	if len(m) == 0 {
		return Pairs{}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	kv := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		kv = append(kv, k, m[k])
	}
	return Pairs{kv: kv}
}

// Len is the number of keys.
func (p Pairs) Len() int { return len(p.kv) / 2 }

// Lookup returns the value of key k and whether p has it.
func (p Pairs) Lookup(k string) (string, bool) {
	n := len(p.kv) / 2
	if n <= 8 {
		for i := 0; i < len(p.kv); i += 2 {
			if p.kv[i] == k {
				return p.kv[i+1], true
			}
		}
		return "", false
	}
	i := sort.Search(n, func(i int) bool { return p.kv[2*i] >= k })
	if i < n && p.kv[2*i] == k {
		return p.kv[2*i+1], true
	}
	return "", false
}

// Has says whether p has key k.
func (p Pairs) Has(k string) bool {
	_, ok := p.Lookup(k)
	return ok
}

// Get returns the value of key k ("" if p has none).
func (p Pairs) Get(k string) string {
	v, _ := p.Lookup(k)
	return v
}

// Equal says whether p and o hold the same keys and values.
func (p Pairs) Equal(o Pairs) bool { return slices.Equal(p.kv, o.kv) }
