package netfault

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// ControlPath is where an actor serves its links' control: GET
// ControlPath answers every link's State; PUT ControlPath+"/<link>" with a
// JSON list of Rules replaces that link's rules and answers its State.
const ControlPath = "/kstep/links"

// maxControlBody bounds a PUT's body.
const maxControlBody = 256 << 10

// Links is the set of links one actor hosts, and their control.
type Links struct {
	mu    sync.Mutex
	links map[string]*Proxy
}

// Add hosts p under its name.
func (l *Links) Add(p *Proxy) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.links == nil {
		l.links = map[string]*Proxy{}
	}
	l.links[p.Name()] = p
}

// Close closes every link.
func (l *Links) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.links {
		p.Close()
	}
}

// Get is the link named name, nil if none.
func (l *Links) Get(name string) *Proxy {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.links[name]
}

// States is every link's state, by name.
func (l *Links) States() []State {
	l.mu.Lock()
	ps := make([]*Proxy, 0, len(l.links))
	for _, p := range l.links {
		ps = append(ps, p)
	}
	l.mu.Unlock()
	out := make([]State, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.State())
	}
	slices.SortFunc(out, func(a, b State) int { return strings.Compare(a.Link, b.Link) })
	return out
}

// ServeHTTP is the control.
func (l *Links) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.Trim(strings.TrimPrefix(r.URL.Path, ControlPath), "/")
	reply := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	switch {
	case r.Method == http.MethodGet && name == "":
		reply(l.States())
	case r.Method == http.MethodGet || r.Method == http.MethodPut:
		p := l.Get(name)
		if p == nil {
			http.Error(w, fmt.Sprintf("links: no link %q here", name), http.StatusNotFound)
			return
		}
		if r.Method == http.MethodPut {
			var rules []Rule
			dec := json.NewDecoder(io.LimitReader(r.Body, maxControlBody))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&rules); err != nil {
				http.Error(w, "links: "+err.Error(), http.StatusBadRequest)
				return
			}
			if err := p.Set(rules); err != nil {
				http.Error(w, "links: "+err.Error(), http.StatusUnprocessableEntity)
				return
			}
		}
		reply(p.State())
	default:
		http.Error(w, "links: GET "+ControlPath+", or GET or PUT "+ControlPath+"/<link>", http.StatusMethodNotAllowed)
	}
}
