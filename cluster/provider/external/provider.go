package external

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kstep-dev/kstep/cluster/provider"
)

func init() {
	provider.Register(provider.Driver{
		Name: provider.External,
		New:  func(s provider.Spec) (provider.Provider, error) { return New(s) },
		// An external cluster is never recorded: kstep down has nothing of
		// it to stop.
		Recorded: func(string) bool { return false },
	})
}

// KubeconfigFile is the file, in the state directory, that holds the chosen
// context alone.
const KubeconfigFile = "kubeconfig"

// Provider is a cluster someone else runs. Safe for concurrent use.
type Provider struct {
	spec provider.Spec

	mu      sync.Mutex
	path    string // the flattened kubeconfig, once Up wrote it
	version string
}

var _ provider.Provider = (*Provider)(nil)

// New returns the provider of the cluster spec.Kubeconfig (its context
// spec.Context, "" the current one) reaches. It reads nothing yet.
func New(spec provider.Spec) (*Provider, error) {
	if spec.Kubeconfig == "" {
		return nil, errors.New("provider external: --kubeconfig is required (the cluster to run against)")
	}
	if spec.StateDir == "" {
		return nil, errors.New("provider external: state dir is empty")
	}
	k, err := filepath.Abs(spec.Kubeconfig)
	if err != nil {
		return nil, err
	}
	spec.Kubeconfig = k
	return &Provider{spec: spec}, nil
}

// Name is "external".
func (p *Provider) Name() string { return provider.External }

// StateDir holds the flattened kubeconfig.
func (p *Provider) StateDir() string { return p.spec.StateDir }

// Selected is the kubeconfig at path reduced to one context (name, ""
// for the current one), with every file it names embedded: a file of its
// own that reaches that cluster and no other.
func Selected(path, name string) (*clientcmdapi.Config, error) {
	raw, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	if name != "" {
		if _, ok := raw.Contexts[name]; !ok {
			return nil, fmt.Errorf("kubeconfig %s: no context %q", path, name)
		}
		raw.CurrentContext = name
	}
	if raw.CurrentContext == "" {
		return nil, fmt.Errorf("kubeconfig %s: no current context: name one with --context", path)
	}
	if err := clientcmdapi.MinifyConfig(raw); err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	if err := clientcmdapi.FlattenConfig(raw); err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return raw, nil
}

// RESTConfig is the client config of the kubeconfig at path (context name,
// "" the current one).
func RESTConfig(path, name string) (*rest.Config, error) {
	c, err := Selected(path, name)
	if err != nil {
		return nil, err
	}
	rc, err := clientcmd.NewDefaultClientConfig(*c, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return rc, nil
}

// Up writes the chosen context's kubeconfig into the state directory and
// checks that the cluster answers discovery. It starts nothing.
func (p *Provider) Up(ctx context.Context) error {
	c, err := Selected(p.spec.Kubeconfig, p.spec.Context)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(p.spec.StateDir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(p.spec.StateDir, KubeconfigFile)
	if err := clientcmd.WriteToFile(*c, path); err != nil {
		return err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return err
	}
	cs, err := p.client(path)
	if err != nil {
		return err
	}
	// Discovery's /version: the cheapest request every apiserver answers.
	vctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := serverVersion(vctx, cs)
	if err != nil {
		return fmt.Errorf("provider external: the cluster of %s (context %q) does not answer: %w", p.spec.Kubeconfig, c.CurrentContext, err)
	}
	p.mu.Lock()
	p.path, p.version = path, v
	p.mu.Unlock()
	return nil
}

func serverVersion(ctx context.Context, cs kubernetes.Interface) (string, error) {
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return "", err
	}
	var v version.Info
	if err := json.Unmarshal(body, &v); err != nil {
		return "", fmt.Errorf("/version: %w (%.200s)", err, body)
	}
	return v.GitVersion, nil
}

// ServerVersion is the cluster's version as /version said at Up.
func (p *Provider) ServerVersion() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.version
}

func (p *Provider) client(path string) (*kubernetes.Clientset, error) {
	rc, err := RESTConfig(path, "")
	if err != nil {
		return nil, err
	}
	rc.Timeout = 30 * time.Second
	return kubernetes.NewForConfig(rc)
}

// Down stops nothing (kstep runs nothing of the cluster); when the spec
// names a run, it deletes what that run labelled, and waits until it is
// gone or ctx ends. Then it deletes its copy of the credentials (the
// flattened kubeconfig): a run directory does not keep them.
func (p *Provider) Down(ctx context.Context) error {
	p.mu.Lock()
	path := p.path
	p.mu.Unlock()
	if path == "" {
		return nil
	}
	var err error
	if p.spec.RunID != "" {
		var cs *kubernetes.Clientset
		if cs, err = p.client(path); err == nil {
			sel := provider.RunLabel + "=" + provider.RunLabelValue(p.spec.RunID)
			var removed Removed
			removed, err = Clean(ctx, cs, sel)
			if p.spec.Log != nil && len(removed) > 0 {
				fmt.Fprintf(p.spec.Log, "provider external: removed what carries %s: %s\n", sel, removed)
			}
		}
	}
	if perr := p.Purge(); perr != nil && err == nil {
		err = perr
	}
	p.mu.Lock()
	p.path = ""
	p.mu.Unlock()
	return err
}

// Purge deletes the flattened kubeconfig.
func (p *Provider) Purge() error {
	err := os.Remove(filepath.Join(p.spec.StateDir, KubeconfigFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// unsupported is the refusal of an actor-level fault.
func unsupported(what, actor string) error {
	return fmt.Errorf("provider external: %s %q: kstep does not run this cluster's actors, so it cannot reach their processes or their network (only the API): %w",
		what, actor, provider.ErrUnsupported)
}

// Start is unsupported: kstep runs no actor of the cluster.
func (p *Provider) Start(_ context.Context, actor string) error { return unsupported("start", actor) }

// Stop is unsupported: kstep has no process of the cluster to signal.
func (p *Provider) Stop(_ context.Context, actor string, sig os.Signal) error {
	return unsupported(fmt.Sprintf("send %v to", sig), actor)
}

// Pause is unsupported.
func (p *Provider) Pause(_ context.Context, actor string) error { return unsupported("pause", actor) }

// Unpause is unsupported.
func (p *Provider) Unpause(_ context.Context, actor string) error {
	return unsupported("unpause", actor)
}

// Signal is unsupported.
func (p *Provider) Signal(_ context.Context, actor, process string, sig os.Signal) error {
	return unsupported(fmt.Sprintf("send %v to %s in", sig, process), actor)
}

// Partition is unsupported.
func (p *Provider) Partition(_ context.Context, actor string, scope provider.Scope) error {
	return unsupported(fmt.Sprintf("partition (%s)", scope), actor)
}

// Heal is unsupported.
func (p *Provider) Heal(_ context.Context, actor string) error { return unsupported("heal", actor) }

// Logs is unsupported: the cluster's logs are where its operator keeps them.
func (p *Provider) Logs(_ context.Context, actor string) (io.ReadCloser, error) {
	return nil, unsupported("read the logs of", actor)
}

// Actors is empty: kstep runs none. The harness finds what it measures
// through the API.
func (p *Provider) Actors() []provider.Actor { return nil }

// Kubeconfig is the chosen context's kubeconfig, once Up wrote it.
func (p *Provider) Kubeconfig() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.path
}

// Usage is empty: kstep accounts only for processes it runs.
func (p *Provider) Usage(context.Context) map[string]provider.Usage { return nil }
