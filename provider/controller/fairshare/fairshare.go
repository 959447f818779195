// Package fairshare keeps one namespace's periodic cycles from taking the
// time every namespace shares. provider-fleetplane runs every team's
// Federations on one set of workers (--max-reconcile-rate of them), and a
// cycle holds its worker, and the CPU and memory of reading its hub's
// heartbeats, for as long as it takes. The policy's minimum interval
// bounds how often a Federation asks; this bounds what its cycles cost,
// whatever their size: a namespace runs one cycle at a time, and spends
// on average at most its share of cycle time (Config.PerMinute of every
// minute), with that much of a burst. A namespace past its share is held
// back, its Federations told when their next cycle runs, rather than
// running on while others wait.
//
// The share is a token bucket of cycle time per namespace: a cycle may
// start while the bucket is not in debt, and what it took is charged when
// it ends, so one long cycle may overdraw it and the namespace then waits
// until the debt is repaid. No cycle is ever cut short: a cycle that
// stopped half way would leave a hub half federated.
package fairshare

import (
	"fmt"
	"sync"
	"time"
)

// DefaultPerMinute is how much cycle time one namespace may spend each
// minute, on average: a tenth of one worker.
const DefaultPerMinute = 6 * time.Second

// Config sets the share.
type Config struct {
	// PerMinute is the cycle time one namespace may spend each minute on
	// average, and its burst; 0 is DefaultPerMinute.
	PerMinute time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Share is the namespaces' shares of cycle time. Its zero value is not
// usable; New makes one. It is safe for concurrent use.
type Share struct {
	perMinute time.Duration
	now       func() time.Time

	mu sync.Mutex
	ns map[string]*account
}

// account is one namespace's bucket and the cycle it runs, if any.
type account struct {
	// balance of cycle time at last; at most perMinute, below 0 in debt.
	balance time.Duration
	last    time.Time
	// running names the resource whose cycle runs, "" when none.
	running string
}

// New makes a Share.
func New(c Config) *Share {
	s := &Share{perMinute: c.PerMinute, now: c.Now, ns: map[string]*account{}}
	if s.perMinute <= 0 {
		s.perMinute = DefaultPerMinute
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// PerMinute is the share, for messages.
func (s *Share) PerMinute() time.Duration { return s.perMinute }

// Held says why a cycle may not start now, and how long until it may.
type Held struct {
	// Wait until the cycle may start.
	Wait time.Duration
	// Reason is a short CamelCase word, Message the whole story.
	Reason, Message string
}

// Reasons of a Held.
const (
	// ReasonBusy: another resource of the namespace is cycling.
	ReasonBusy = "NamespaceBusy"
	// ReasonOverShare: the namespace spent more than its share.
	ReasonOverShare = "OverShare"
)

// busyWait is how soon a cycle held behind another of its namespace asks
// again: cycles are seconds long, and asking costs a map lookup.
const busyWait = time.Second

// Start asks to start the cycle of resource (a name, for messages) in
// namespace. It returns nil when the cycle may start, and the caller must
// then call the returned done with nothing else; otherwise it returns why
// not. done charges the time since Start and frees the namespace.
func (s *Share) Start(namespace, resource string) (done func(), held *Held) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	a := s.account(namespace, now)
	switch {
	case a.running != "":
		return nil, &Held{Wait: busyWait, Reason: ReasonBusy, Message: fmt.Sprintf(
			"held back: %s of namespace %s is running its cycle, and a namespace runs one at a time so that every namespace gets the provider's workers", a.running, namespace)}
	case a.balance < 0:
		return nil, s.overShare(namespace, a)
	}
	a.running = resource
	started := now
	return func() { s.done(namespace, started) }, nil
}

// overShare is why a namespace in debt waits.
func (s *Share) overShare(namespace string, a *account) *Held {
	wait := s.repay(-a.balance)
	return &Held{Wait: wait, Reason: ReasonOverShare, Message: fmt.Sprintf(
		"held back: namespace %s's federation cycles took %s more than its share of the provider's time (%s a minute, --federation-time-per-namespace); its next cycle runs in %s",
		namespace, roundUp(-a.balance), s.perMinute, wait.Round(100*time.Millisecond))}
}

// roundUp is d to the tenth of a second above, so that a debt shows.
func roundUp(d time.Duration) time.Duration {
	const tenth = 100 * time.Millisecond
	return (d + tenth - 1).Truncate(tenth)
}

// OverShare says, when namespace has spent more than its share, how long
// its next cycle waits and why; nil when it may cycle. For a resource's
// status after its cycle, which is what users see while it waits.
func (s *Share) OverShare(namespace string) *Held {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.ns[namespace]; !ok {
		return nil
	}
	a := s.account(namespace, s.now())
	if a.balance >= 0 {
		return nil
	}
	return s.overShare(namespace, a)
}

// done charges a cycle that started at started and frees its namespace.
func (s *Share) done(namespace string, started time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	a := s.account(namespace, now)
	a.running = ""
	a.balance -= now.Sub(started)
}

// account is namespace's account refilled to now. Accounts are kept per
// namespace that ever cycled: a few dozen bytes each.
func (s *Share) account(namespace string, now time.Time) *account {
	a, ok := s.ns[namespace]
	if !ok {
		a = &account{balance: s.perMinute, last: now}
		s.ns[namespace] = a
		return a
	}
	if elapsed := now.Sub(a.last); elapsed > 0 {
		a.balance = min(s.perMinute, a.balance+s.refill(elapsed))
		a.last = now
	}
	return a
}

// refill is what elapsed adds to a bucket: PerMinute each minute.
func (s *Share) refill(elapsed time.Duration) time.Duration {
	return time.Duration(float64(elapsed) * float64(s.perMinute) / float64(time.Minute))
}

// repay is how long a debt takes to repay.
func (s *Share) repay(debt time.Duration) time.Duration {
	return time.Duration(float64(debt)*float64(time.Minute)/float64(s.perMinute)) + time.Millisecond
}

// Wait is how long until a cycle of namespace may start, 0 when it may
// now: for a poll hook, which comes back then rather than at once. A nil
// Share never waits.
func (s *Share) Wait(namespace string) time.Duration {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.ns[namespace]; !ok {
		return 0
	}
	a := s.account(namespace, s.now())
	switch {
	case a.running != "":
		return busyWait
	case a.balance < 0:
		return s.repay(-a.balance)
	}
	return 0
}
