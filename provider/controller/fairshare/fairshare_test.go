package fairshare

import (
	"strings"
	"sync"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

// TestShare: one cycle at a time per namespace; a namespace that spent
// its share waits until it is repaid, and says so; another namespace is
// never held by it.
func TestShare(t *testing.T) {
	c := &clock{t: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)}
	s := New(Config{PerMinute: 6 * time.Second, Now: c.now})

	done, held := s.Start("noisy", "Federation a")
	if held != nil {
		t.Fatalf("the first cycle is held: %+v", held)
	}
	if _, held := s.Start("noisy", "Federation b"); held == nil || held.Reason != ReasonBusy || !strings.Contains(held.Message, "Federation a of namespace noisy is running its cycle") {
		t.Fatalf("a second cycle of the namespace at once: %+v", held)
	}
	quietDone, held := s.Start("quiet", "Federation q")
	if held != nil {
		t.Fatalf("another namespace is held by the noisy one: %+v", held)
	}
	c.advance(time.Second)
	quietDone()
	c.advance(15 * time.Second) // noisy: 6 s of share, 10 s of debt
	done()

	_, held = s.Start("noisy", "Federation a")
	if held == nil || held.Reason != ReasonOverShare {
		t.Fatalf("a namespace 10 s in debt starts a cycle: %+v", held)
	}
	// 10 s of debt at 6 s a minute: 100 s.
	if want := 100 * time.Second; held.Wait < want || held.Wait > want+time.Second {
		t.Errorf("wait %s, want %s", held.Wait, want)
	}
	if !strings.Contains(held.Message, "took 10s more than its share of the provider's time (6s a minute, --federation-time-per-namespace); its next cycle runs in 1m40s") {
		t.Errorf("message %q", held.Message)
	}
	if w := s.Wait("noisy"); w != held.Wait {
		t.Errorf("Wait %s, Start's %s", w, held.Wait)
	}
	if _, held := s.Start("quiet", "Federation q"); held != nil {
		t.Fatalf("a namespace within its share is held: %+v", held)
	}
	c.advance(held.Wait)
	if _, held := s.Start("noisy", "Federation a"); held != nil {
		t.Fatalf("still held once repaid: %+v", held)
	}
	if s.Wait("never-seen") != 0 {
		t.Error("a namespace never seen waits")
	}
}

// TestShareBoundsTheAverage: a namespace that cycles back to back gets
// its share over time and no more: over ten minutes of 2-second cycles,
// at most the burst plus 6 s a minute.
func TestShareBoundsTheAverage(t *testing.T) {
	c := &clock{t: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)}
	s := New(Config{Now: c.now})
	end := c.t.Add(10 * time.Minute)
	spent := time.Duration(0)
	for c.t.Before(end) {
		done, held := s.Start("noisy", "Federation a")
		if held != nil {
			c.advance(held.Wait)
			continue
		}
		c.advance(2 * time.Second)
		spent += 2 * time.Second
		done()
	}
	if limit := DefaultPerMinute + 10*DefaultPerMinute + 2*time.Second; spent > limit {
		t.Errorf("spent %s in ten minutes, more than %s", spent, limit)
	}
	if spent < 10*DefaultPerMinute-2*time.Second {
		t.Errorf("spent only %s in ten minutes: the share is not given", spent)
	}
}

func TestShareIsSafeForConcurrentUse(t *testing.T) {
	s := New(Config{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 100 {
				if done, _ := s.Start(string(rune('a'+i%3)), "x"); done != nil {
					done()
				}
				_ = s.Wait("a")
			}
		})
	}
	wg.Wait()
}
