package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"runtime/pprof"
	"sync"
	"testing"
	"time"
)

// Calls run as started calls: a goroutine waiting on one holds no OS thread. With blocking
// cgo calls, 256 calls hanging at once would each pin a thread; here the thread count stays
// flat, and one cancel ends each call at once.
func TestStartedCallsHoldNoThreadAndCancelAtOnce(t *testing.T) {
	c := connected(t, nil)
	threads := pprof.Lookup("threadcreate")
	before, base := threads.Count(), startedInFlight.Load()
	const n = 256
	ctx, cancel := context.WithCancel(testCtx(t))
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			_, err := c.CallTool(ctx, "hang", nil)
			errs <- err
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for startedInFlight.Load() < base+n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d calls started", startedInFlight.Load()-base, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A thread per call would add 256. Go itself may add a few Ms while goroutines sit briefly
	// in the *_start cgo calls (more on a loaded machine), so the bound is far from both.
	if grown := threads.Count() - before; grown > n/4 {
		t.Fatalf("%d OS threads created for %d calls in flight", grown, n)
	}
	start := time.Now()
	cancel()
	for i := 0; i < n; i++ {
		if err := <-errs; !errors.Is(err, ErrCancelled) || !errors.Is(err, context.Canceled) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("%d cancellations took %v", n, d)
	}
	if got := startedInFlight.Load(); got != base {
		t.Fatalf("started calls in flight: %d before, %d after", base, got)
	}
	if got := callText(t, c, "echo", map[string]any{"text": "after"}); got != "after" {
		t.Fatal(got)
	}
}

// Close completes started calls in flight with ErrClosed (the library's close_all).
func TestCloseCompletesStartedCalls(t *testing.T) {
	c := connected(t, nil)
	base := startedInFlight.Load()
	errs := make(chan error, 1)
	go func() { _, err := c.CallTool(context.Background(), "hang", nil, WithTimeout(-1)); errs <- err }()
	deadline := time.Now().Add(10 * time.Second)
	for startedInFlight.Load() < base+1 {
		if time.Now().After(deadline) {
			t.Fatal("the call never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	within(t, 5*time.Second, "Close with a hanging started call", func() { c.Close() })
	if err := <-errs; !errors.Is(err, ErrClosed) {
		t.Fatalf("hanging call at Close: %v", err)
	}
}

// A handler's context ends through the library's pushed cancellation when the call times
// out inside the library (no Go context involved).
func TestHandlerContextEndsOnLibraryTimeout(t *testing.T) {
	c := connected(t, nil)
	ended := make(chan error, 1)
	if err := c.OnElicitation(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		<-ctx.Done()
		ended <- ctx.Err()
		return nil, ctx.Err()
	}); err != nil {
		t.Fatal(err)
	}
	_, err := c.CallTool(context.Background(), "elicit_once", nil, WithTimeout(150*time.Millisecond),
		WithMaxTotal(150*time.Millisecond))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("timed-out call: %v", err)
	}
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the handler's context did not end after the call timed out")
	}
}

// Concurrent readers of one subscription are serialised; each cancelled read ends at once and
// the subscription still delivers afterwards.
func TestSubscriptionNextCancelledRepeatedly(t *testing.T) {
	c := connected(t, nil)
	sub, err := c.Listen(testCtx(t), map[string]any{"toolsListChanged": true})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			defer cancel()
			if _, err := sub.Next(ctx); !errors.Is(err, ErrTimeout) {
				t.Errorf("idle Next: %v", err)
			}
		}()
	}
	within(t, 5*time.Second, "eight short reads", wg.Wait)
	callText(t, c, "notify", nil)
	ev, err := sub.Next(testCtx(t))
	if err != nil || ev.Method != "notifications/tools/list_changed" {
		t.Fatalf("after notify: %v %+v", err, ev)
	}
}
