package federation

import (
	"testing"
	"time"
)

func TestSchemaCaches(t *testing.T) {
	c := newSchemaCaches()
	t0 := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	a := c.get("a", t0)
	if c.get("a", t0.Add(time.Minute)) != a {
		t.Error("a Federation gets its own cache back")
	}
	if c.get("b", t0.Add(time.Minute)) == a {
		t.Error("two Federations never share a cache")
	}
	c.forget("a")
	if c.get("a", t0.Add(2*time.Minute)) == a {
		t.Error("a deleted Federation's cache is forgotten")
	}
	b := c.get("b", t0.Add(time.Minute+schemaIdle))
	if b != c.get("b", t0.Add(time.Minute+schemaIdle)) {
		t.Error("a cache used within the idle time is kept")
	}
	c.get("c", t0.Add(3*time.Minute+schemaIdle))
	if _, ok := c.byUID["a"]; ok {
		t.Error("a cache unused for longer than the idle time is forgotten")
	}
	if len(c.byUID) != 2 {
		t.Errorf("caches = %d, want b and c", len(c.byUID))
	}
}
