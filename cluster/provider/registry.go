package provider

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
)

// The provider names every command accepts. Auto is not a provider of its
// own: it picks the first of AutoOrder whose Available answers.
const (
	Process  = "process"
	Docker   = "docker"
	External = "external"
	Auto     = "auto"
)

// RunLabel is the label kstep puts on everything a run creates in a
// cluster it does not run (namespaces, ReplicaSets, Deployments, Services,
// their pods), its value the run's ID: what the external provider removes after a run and
// `kstep clean` removes after a run that was killed, and all they touch.
const RunLabel = "kstep.dev/run"

// AutoOrder is auto's preference: docker when a Docker daemon answers (every
// actor in its own container, as users run kstep), otherwise process.
var AutoOrder = []string{Docker, Process}

// Driver is a provider implementation as the registry knows it.
type Driver struct {
	Name string
	// New makes a Provider for the cluster of spec.StateDir (loading the
	// cluster recorded there, if any); it does not start anything.
	New func(spec Spec) (Provider, error)
	// Available says why the provider cannot run on this machine now (no
	// Docker daemon), nil when it can.
	Available func(ctx context.Context) error
	// Recorded reports whether this provider recorded a cluster in
	// stateDir (how kstep down finds the provider of a cluster).
	Recorded func(stateDir string) bool
	// RealNodes says why spec's real nodes cannot run here, nil when they
	// can.
	RealNodes func(spec Spec) error
}

var (
	driversMu sync.Mutex
	drivers   = map[string]Driver{}
)

// Register makes a provider known by name. Implementations register
// themselves in init; the kstep binary imports them.
func Register(d Driver) {
	driversMu.Lock()
	defer driversMu.Unlock()
	if _, dup := drivers[d.Name]; dup {
		panic("provider: Register called twice for " + d.Name)
	}
	drivers[d.Name] = d
}

// Names are the registered providers, sorted, then auto.
func Names() []string {
	driversMu.Lock()
	defer driversMu.Unlock()
	return namesLocked()
}

func driver(name string) (Driver, error) {
	driversMu.Lock()
	defer driversMu.Unlock()
	d, ok := drivers[name]
	if !ok {
		return Driver{}, fmt.Errorf("provider %q: want %s", name, strings.Join(namesLocked(), ", "))
	}
	return d, nil
}

func namesLocked() []string {
	var out []string
	for n := range drivers {
		out = append(out, n)
	}
	sort.Strings(out)
	return append(out, Auto)
}

// Resolve turns a --provider value into a registered provider's name: ""
// is process; auto is the first of AutoOrder that is available, and it
// says on log which it chose and why.
func Resolve(ctx context.Context, name string, log io.Writer) (string, error) {
	say := func(format string, a ...any) {
		if log != nil {
			fmt.Fprintf(log, "kstep: --provider auto: "+format+"\n", a...)
		}
	}
	switch name {
	case "":
		return Process, nil
	case Auto:
		var why []string
		for _, n := range AutoOrder {
			d, err := driver(n)
			if err != nil {
				continue
			}
			if d.Available != nil {
				if err := d.Available(ctx); err != nil {
					why = append(why, fmt.Sprintf("not %s: %v", n, err))
					continue
				}
			}
			reason := "the first available of " + strings.Join(AutoOrder, ", ")
			if n == Docker {
				reason = "a Docker daemon answers; every actor runs in its own container"
			}
			say("%s (%s)", n, strings.Join(append(why, reason), "; "))
			return n, nil
		}
		return "", fmt.Errorf("provider auto: none available (%s)", strings.Join(why, "; "))
	}
	if _, err := driver(name); err != nil {
		return "", err
	}
	return name, nil
}

// New makes the named provider (process, docker or auto, resolved as
// Resolve does) for spec's cluster.
func New(ctx context.Context, name string, spec Spec) (Provider, error) {
	name, err := Resolve(ctx, name, spec.Log)
	if err != nil {
		return nil, err
	}
	d, _ := driver(name)
	return d.New(spec)
}

// Open is the provider of the cluster recorded in spec.StateDir: the one
// whose Recorded says so, process when none does (it then has no cluster).
func Open(spec Spec) (Provider, error) {
	driversMu.Lock()
	var ds []Driver
	for _, d := range drivers {
		ds = append(ds, d)
	}
	driversMu.Unlock()
	slices.SortFunc(ds, func(a, b Driver) int { return strings.Compare(a.Name, b.Name) })
	for _, d := range ds {
		if d.Recorded != nil && d.Recorded(spec.StateDir) {
			return d.New(spec)
		}
	}
	d, err := driver(Process)
	if err != nil {
		return nil, err
	}
	return d.New(spec)
}

// CanRunRealNodes says why the named provider cannot run spec's real nodes
// on this machine, nil when it can (or the provider has no such limit).
func CanRunRealNodes(name string, spec Spec) error {
	d, err := driver(name)
	if err != nil {
		return err
	}
	if d.RealNodes == nil {
		return nil
	}
	return d.RealNodes(spec)
}

// RunLabelValue is id as a label value: the characters a label value may
// hold, at most 63 of them, beginning and ending with a letter or digit.
func RunLabelValue(id string) string {
	b := []byte(id)
	out := b[:0]
	for _, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
			out = append(out, c)
		default:
			out = append(out, '-')
		}
	}
	if len(out) > 63 {
		out = out[len(out)-63:]
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	for len(out) > 0 && !alnum(out[0]) {
		out = out[1:]
	}
	for len(out) > 0 && !alnum(out[len(out)-1]) {
		out = out[:len(out)-1]
	}
	return string(out)
}
