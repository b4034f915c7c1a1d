package leader

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Config names the lease and times the election.
type Config struct {
	// Namespace and Name of the Lease (kube-system/kstep-controller-manager).
	Namespace, Name string
	// Identity is this candidate's holder identity; unique per process.
	Identity string
	// LeaseDuration is how long a lease is valid without renewal: a dead
	// leader is replaced at most this long (plus a retry) after it stopped.
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader keeps retrying a renewal before
	// it stops acting.
	RenewDeadline time.Duration
	// RetryPeriod is the interval between acquire and renew attempts.
	RetryPeriod time.Duration
}

// Defaults chosen so a SIGKILLed leader is replaced within 3 s: the lease
// expires after 2 s and a standby retries every 250 ms.
func Defaults(name, identity string) Config {
	return Config{
		Namespace:     metav1.NamespaceSystem,
		Name:          name,
		Identity:      identity,
		LeaseDuration: 2 * time.Second,
		RenewDeadline: 1500 * time.Millisecond,
		RetryPeriod:   250 * time.Millisecond,
	}
}

// Validate checks the timing rules leaderelection enforces.
func (c Config) Validate() error {
	if c.Name == "" || c.Namespace == "" || c.Identity == "" {
		return fmt.Errorf("leader election needs a lease namespace, name and identity")
	}
	if c.LeaseDuration <= c.RenewDeadline {
		return fmt.Errorf("lease duration %v must be greater than the renew deadline %v", c.LeaseDuration, c.RenewDeadline)
	}
	if c.RenewDeadline <= time.Duration(leaderelection.JitterFactor*float64(c.RetryPeriod)) {
		return fmt.Errorf("renew deadline %v must be greater than %v × the retry period %v", c.RenewDeadline, leaderelection.JitterFactor, c.RetryPeriod)
	}
	return nil
}

// Run campaigns until ctx ends. Whenever this candidate leads, lead runs
// with a context cancelled on loss of the lease; Run waits for lead to
// return before it campaigns again, so two leaders never act together in
// this process. onChange, if set, hears every observed leader identity.
func Run(ctx context.Context, client kubernetes.Interface, cfg Config, log *slog.Logger, lead func(ctx context.Context), onChange func(identity string)) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	lock := &releaseOwnLock{Interface: &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: cfg.Namespace, Name: cfg.Name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: cfg.Identity},
	}}
	for ctx.Err() == nil {
		// client-go starts OnStartedLeading in a goroutine that may run
		// after Run has returned; an iteration that is over refuses to lead.
		var mu sync.Mutex
		var active sync.WaitGroup
		over := false
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			LeaseDuration:   cfg.LeaseDuration,
			RenewDeadline:   cfg.RenewDeadline,
			RetryPeriod:     cfg.RetryPeriod,
			ReleaseOnCancel: true,
			Name:            cfg.Name,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(lctx context.Context) {
					mu.Lock()
					if over {
						mu.Unlock()
						return
					}
					active.Add(1)
					mu.Unlock()
					defer active.Done()
					log.Info("leading", "lease", cfg.Namespace+"/"+cfg.Name, "identity", cfg.Identity)
					lead(lctx)
				},
				OnStoppedLeading: func() {
					log.Info("not leading", "lease", cfg.Namespace+"/"+cfg.Name, "identity", cfg.Identity)
				},
				OnNewLeader: func(id string) {
					if onChange != nil {
						onChange(id)
					}
				},
			},
		})
		if err != nil {
			return fmt.Errorf("leader election %s: %w", cfg.Name, err)
		}
		// Run returns when leadership is lost or ctx ends; the work's
		// context is already cancelled by then: wait for the work to stop.
		le.Run(ctx)
		mu.Lock()
		over = true
		mu.Unlock()
		active.Wait()
	}
	return nil
}

// releaseOwnLock releases the lease only while this candidate holds it.
//
// client-go (v0.37) releases on every exit of the renew loop when
// ReleaseOnCancel is set, including a renewal that timed out: it reads the
// Lease afresh, but decides whether it leads from the last record it had
// observed, which after a failed renewal still names it. When a standby
// took the lease meanwhile, that "release" writes an empty holder over the
// new leader's record at its current resourceVersion: it succeeds, this
// candidate acquires the free lease at once, and the new leader acts until
// its own renewal fails, 1.5 s of two leaders. The chaos smoke suite saw a
// ReplicaSet get two extra pods from it during an etcd leader kill (the
// Lease's etcd history: acquired by the standby, emptied 6 ms later,
// re-acquired by the old leader 3 ms after that).
//
// A release is an Update with an empty holder, always right after a Get;
// it is written only when that Get showed this candidate as the holder.
type releaseOwnLock struct {
	resourcelock.Interface
	mu         sync.Mutex
	lastHolder string
}

func (l *releaseOwnLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	rec, raw, err := l.Interface.Get(ctx)
	l.mu.Lock()
	l.lastHolder = ""
	if err == nil && rec != nil {
		l.lastHolder = rec.HolderIdentity
	}
	l.mu.Unlock()
	return rec, raw, err
}

func (l *releaseOwnLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	if ler.HolderIdentity == "" {
		l.mu.Lock()
		ours := l.lastHolder == l.Identity()
		l.mu.Unlock()
		if !ours {
			return nil // someone else leads: nothing of ours to release
		}
	}
	return l.Interface.Update(ctx, ler)
}
