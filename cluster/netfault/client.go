package netfault

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/kstep-dev/kstep/internal/util/jsonctl"
)

// ErrNoLink: the actor hosts no such link (it runs without link proxies).
var ErrNoLink = errors.New("no such link")

// Client drives the control of one actor's links at base (the actor's
// URL, e.g. "http://127.0.0.1:2379"), over hc.
type Client struct {
	HC   *http.Client
	Base string
}

// States lists the actor's links.
func (c Client) States(ctx context.Context) ([]State, error) {
	var out []State
	return out, c.call(ctx, http.MethodGet, ControlPath, nil, &out)
}

// Get is one link's state.
func (c Client) Get(ctx context.Context, link string) (State, error) {
	var st State
	return st, c.call(ctx, http.MethodGet, ControlPath+"/"+link, nil, &st)
}

// Set replaces one link's rules.
func (c Client) Set(ctx context.Context, link string, rules []Rule) (State, error) {
	if rules == nil {
		rules = []Rule{}
	}
	body, err := json.Marshal(rules)
	if err != nil {
		return State{}, err
	}
	var st State
	return st, c.call(ctx, http.MethodPut, ControlPath+"/"+link, body, &st)
}

// Update replaces the rule named rule.Name on link (adds it if absent),
// keeping the others.
func (c Client) Update(ctx context.Context, link string, rule Rule) (State, error) {
	return c.edit(ctx, link, rule.Name, &rule)
}

// Remove drops the rule named name from link.
func (c Client) Remove(ctx context.Context, link, name string) (State, error) {
	return c.edit(ctx, link, name, nil)
}

func (c Client) edit(ctx context.Context, link, name string, rule *Rule) (State, error) {
	st, err := c.Get(ctx, link)
	if err != nil {
		return st, err
	}
	rules := make([]Rule, 0, len(st.Rules)+1)
	for _, r := range st.Rules {
		if r.Name != name {
			// Keep what is left of its time.
			r.For = remaining(r)
			rules = append(rules, r)
		}
	}
	if rule != nil {
		rules = append(rules, *rule)
	}
	return c.Set(ctx, link, rules)
}

func (c Client) call(ctx context.Context, method, path string, body []byte, out any) error {
	return jsonctl.Call(ctx, c.HC, method, c.Base, path, body, out, ErrNoLink)
}
