package mcpclient

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A call on a client that has not connected yet stops waiting when its context ends, even while
// the auto probe waits on a silent server: the library's implicit connect honours the call's
// options (the binding no longer connects first as a workaround).
func TestImplicitConnectHonoursContext(t *testing.T) {
	c := newFixture(t, []string{"--on-discover", "silent"}, WithProbeTimeout(3*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.CallTool(ctx, "echo", map[string]any{"text": "x"})
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("deadline during the implicit connect: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("returned after %v", d)
	}
	within(t, 3*time.Second, "Close during the abandoned connect", func() { c.Close() })
}

// The first call's cancel token and max_total_ms both end its wait during the implicit connect
// (the auto probe of a silent server would otherwise hold it for the whole probe timeout). A
// blocking call (no started form), so the token path is the one tested.
func TestImplicitConnectHonoursCancelAndMaxTotal(t *testing.T) {
	for _, how := range []string{"max_total_ms", "cancel token"} {
		c := newFixture(t, []string{"--on-discover", "silent"}, WithProbeTimeout(1500*time.Millisecond))
		var ctx context.Context
		var cancel context.CancelFunc
		if how == "max_total_ms" {
			ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
		} else {
			ctx, cancel = context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
		}
		start := time.Now()
		err := c.SetLogLevel(ctx, "info")
		d := time.Since(start)
		cancel()
		if d > time.Second {
			t.Errorf("%s: the first call (implicit connect) returned after %v (%v); want about 200 ms", how, d.Round(time.Millisecond), err)
		}
	}
}
