package hollowctl

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/kstep-dev/kstep/internal/util/jsonctl"
)

// Path is where a hollow-nodes actor serves the control.
const Path = "/kstep/kubelets"

// Kubelet is one node's kubelet in the actor.
type Kubelet struct {
	Node    string `json:"node"`
	Running bool   `json:"running"`
	// Starts counts how many times it was started (1 for never restarted).
	Starts int `json:"starts"`
}

// ErrUnknownNode: the actor runs no kubelet for the node.
var ErrUnknownNode = errors.New("no such hollow node")

// Controller is what the actor does.
type Controller interface {
	Kubelets() []Kubelet
	// Stop stops node's kubelet and returns once it has stopped; Start
	// starts it again. Stopping a stopped kubelet or starting a running
	// one is not an error.
	Stop(ctx context.Context, node string) error
	Start(ctx context.Context, node string) error
}

// Handler serves the control for c.
func Handler(c Controller) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest := strings.Trim(strings.TrimPrefix(r.URL.Path, Path), "/")
		reply := func(v any) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(v)
		}
		if rest == "" && r.Method == http.MethodGet {
			reply(c.Kubelets())
			return
		}
		node, verb, ok := strings.Cut(rest, "/")
		if !ok || r.Method != http.MethodPost || (verb != "stop" && verb != "start") {
			http.Error(w, "hollow kubelets: GET "+Path+", or POST "+Path+"/<node>/stop or /start", http.StatusMethodNotAllowed)
			return
		}
		var err error
		if verb == "stop" {
			err = c.Stop(r.Context(), node)
		} else {
			err = c.Start(r.Context(), node)
		}
		switch {
		case errors.Is(err, ErrUnknownNode):
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		for _, k := range c.Kubelets() {
			if k.Node == node {
				reply(k)
				return
			}
		}
		http.Error(w, node+": "+ErrUnknownNode.Error(), http.StatusNotFound)
	})
}

// Client drives one actor's control at Base (its ops URL).
type Client struct {
	HC   *http.Client
	Base string
}

// List is the actor's kubelets.
func (c Client) List(ctx context.Context) ([]Kubelet, error) {
	var out []Kubelet
	return out, c.call(ctx, http.MethodGet, Path, &out)
}

// Stop stops node's kubelet.
func (c Client) Stop(ctx context.Context, node string) (Kubelet, error) {
	var k Kubelet
	return k, c.call(ctx, http.MethodPost, Path+"/"+node+"/stop", &k)
}

// Start starts node's kubelet again.
func (c Client) Start(ctx context.Context, node string) (Kubelet, error) {
	var k Kubelet
	return k, c.call(ctx, http.MethodPost, Path+"/"+node+"/start", &k)
}

func (c Client) call(ctx context.Context, method, path string, out any) error {
	return jsonctl.Call(ctx, c.HC, method, c.Base, path, nil, out, ErrUnknownNode)
}
