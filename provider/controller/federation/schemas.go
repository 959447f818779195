package federation

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	fed "github.com/fleetplane/fleetplane/provider/kusto/federation"
)

// schemaIdle is how long the decoded heartbeats of a Federation no cycle
// used are kept: a Federation deleted while the provider was down is never
// seen deleted, and must not pin its fleet in memory.
const schemaIdle = 6 * time.Hour

// schemaCaches keeps each Federation's decoded heartbeats between cycles,
// by UID: a cache is never shared between Federations, whatever hub or
// namespace they name.
type schemaCaches struct {
	mu    sync.Mutex
	byUID map[types.UID]*usedSchemas
}

type usedSchemas struct {
	schemas *fed.Schemas
	used    time.Time
}

func newSchemaCaches() *schemaCaches {
	return &schemaCaches{byUID: map[types.UID]*usedSchemas{}}
}

// get returns uid's cache, made when new, and forgets those idle too long.
func (c *schemaCaches) get(uid types.UID, now time.Time) *fed.Schemas {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, u := range c.byUID {
		if now.Sub(u.used) > schemaIdle {
			delete(c.byUID, k)
		}
	}
	u := c.byUID[uid]
	if u == nil {
		u = &usedSchemas{schemas: fed.NewSchemas()}
		c.byUID[uid] = u
	}
	u.used = now
	return u.schemas
}

func (c *schemaCaches) forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byUID, uid)
}
