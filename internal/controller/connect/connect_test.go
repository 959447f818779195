package connect

import (
	"testing"
	"time"
)

func TestDue(t *testing.T) {
	now := time.Now()
	if due, _ := Due(time.Time{}, time.Minute, now); !due {
		t.Error("never run is due")
	}
	if due, until := Due(now.Add(-30*time.Second), time.Minute, now); due || until != 30*time.Second {
		t.Errorf("half way: due=%v until=%s", due, until)
	}
	if due, _ := Due(now.Add(-time.Minute), time.Minute, now); !due {
		t.Error("a full interval ago is due")
	}
}
