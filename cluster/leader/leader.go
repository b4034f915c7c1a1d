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
	}, renewDeadline: cfg.RenewDeadline}
	for ctx.Err() == nil {
		lock.newTerm()
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
					// The work stops at this candidate's own renew deadline
					// and before any release, not when client-go gets to
					// cancel it (see fence).
					wctx, done := lock.fence(lctx, log)
					defer done()
					log.Info("leading", "lease", cfg.Namespace+"/"+cfg.Name, "identity", cfg.Identity)
					lead(wctx)
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
//
// It also fences the leader's work (fence): client-go cancels the work's
// context only after its renew loop has given up and its release (a Get and
// an Update, each bounded by the renew deadline) has returned, so with
// etcd unreachable the work went on up to a renew deadline past its own,
// beyond the lease's expiry, while a standby took over: two
// controller-managers created a pod each for one ReplicaSet during an etcd
// leader kill. Now the work is cancelled at the renew deadline counted from
// the last renewal this candidate sent, which a standby can see expire no
// earlier than LeaseDuration after it, and the release is written only once
// the work has returned.
type releaseOwnLock struct {
	resourcelock.Interface
	renewDeadline time.Duration

	mu         sync.Mutex
	lastHolder string
	// lastSent is when the last successful write naming this candidate
	// the holder (an acquisition or a renewal) was sent.
	lastSent time.Time
	// While leading: the work's cancel, its timer, and a channel closed
	// when it has returned. fenced: the timer fired; no renewal may
	// succeed after it, so client-go gives the lease up too rather than
	// lead with its work stopped.
	cancel   context.CancelFunc
	timer    *time.Timer
	returned chan struct{}
	fenced   bool
}

// fence derives the leader's work context: cancelled when lctx is, when no
// renewal has succeeded for renewDeadline since it was sent, and before a
// release. done must be called when the work returns.
func (l *releaseOwnLock) fence(lctx context.Context, log *slog.Logger) (context.Context, func()) {
	ctx, cancel := context.WithCancel(lctx)
	returned := make(chan struct{})
	l.mu.Lock()
	l.cancel, l.returned = cancel, returned
	deadline := l.renewDeadline
	if !l.lastSent.IsZero() {
		deadline = time.Until(l.lastSent.Add(l.renewDeadline))
	}
	l.timer = time.AfterFunc(deadline, func() {
		l.mu.Lock()
		l.fenced = true
		l.mu.Unlock()
		log.Warn("renew deadline passed: stopping the leader's work", "identity", l.Identity())
		cancel()
	})
	l.mu.Unlock()
	return ctx, func() {
		cancel()
		l.mu.Lock()
		if l.timer != nil {
			l.timer.Stop()
		}
		l.cancel, l.timer = nil, nil
		l.mu.Unlock()
		close(returned)
	}
}

// newTerm lifts the fence for the next election: the previous one is over
// (client-go's Run has returned).
func (l *releaseOwnLock) newTerm() {
	l.mu.Lock()
	l.fenced = false
	l.mu.Unlock()
}

// renewed pushes the work's deadline to renewDeadline after sent, the time
// a successful renewal was sent.
func (l *releaseOwnLock) renewed(sent time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lastSent = sent
	if l.timer != nil && !l.fenced {
		l.timer.Reset(time.Until(sent.Add(l.renewDeadline)))
	}
}

// errFenced refuses a renewal after the work's deadline has passed.
var errFenced = fmt.Errorf("renew deadline passed: the leader's work has stopped")

// stopWork cancels the leader's work and waits, up to the renew deadline,
// for it to return.
func (l *releaseOwnLock) stopWork() {
	l.mu.Lock()
	cancel, returned := l.cancel, l.returned
	l.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	select {
	case <-returned:
	case <-time.After(l.renewDeadline):
	}
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
		// The lease is free for a standby the moment this lands: the work
		// must have stopped first.
		l.stopWork()
		return l.Interface.Update(ctx, ler)
	}
	if ler.HolderIdentity == l.Identity() {
		l.mu.Lock()
		fenced := l.fenced
		l.mu.Unlock()
		if fenced {
			return errFenced
		}
	}
	sent := time.Now()
	err := l.Interface.Update(ctx, ler)
	if err == nil && ler.HolderIdentity == l.Identity() {
		l.renewed(sent)
	}
	return err
}

func (l *releaseOwnLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	sent := time.Now()
	err := l.Interface.Create(ctx, ler)
	if err == nil && ler.HolderIdentity == l.Identity() {
		l.renewed(sent)
	}
	return err
}
