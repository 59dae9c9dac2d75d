package mcpclient

import (
	"context"
	"errors"
	"testing"
	"time"
)

// With the binding's explicit connect, a call on a client that has not connected yet stops
// waiting when its context ends, even while the auto probe waits on a silent server.
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

// Library bug: mcp_call_opts documents `cancel` as cancelling the call and `max_total_ms` as
// the "cap for the whole call", but a call that connects implicitly (the first call on a
// client) ignores both while connecting: Client::connection() runs connect() before the
// request's Wait is built (src/client/mod.rs), so the auto probe of a silent server holds
// the call for the whole probe_timeout_ms. Here the binding's workaround is switched off to
// show the library's own behaviour on a blocking call (started calls, e.g. CallTool, return on
// cancel whatever the connect does): a 200 ms cap, and a cancel at 200 ms, both return only
// after the 1.5 s probe.
func TestLibraryImplicitConnectIgnoresCancelAndMaxTotal(t *testing.T) {
	connectFirst.Store(false)
	defer connectFirst.Store(true)
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
