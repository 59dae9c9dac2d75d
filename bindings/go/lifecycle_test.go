//go:build !windows

package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestContextCancel(t *testing.T) {
	sig := newSignal(t)
	c := connected(t, sig.Args())
	ctx, cancel := context.WithCancel(testCtx(t))
	// Cancelled once the call reached the server (which never answers it).
	go func() {
		_ = sig.wait("request tools/call hang", 1, 10*time.Second)
		cancel()
	}()
	start := time.Now()
	_, err := c.CallTool(ctx, "hang", nil)
	if !errors.Is(err, ErrCancelled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("cancellation took %v", d)
	}
	// The server was told (stdio: notifications/cancelled for that request id).
	sig.Wait(t, "notification notifications/cancelled", 1)
	if got := callText(t, c, "cancelled_ids", nil); got == "[]" {
		t.Fatal("the server never recorded notifications/cancelled")
	}
	// A context cancelled before the call: nothing is sent.
	_, err = c.CallTool(ctx, "echo", map[string]any{"text": "x"})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrCancelled) {
		t.Fatalf("pre-cancelled: %v", err)
	}
	// The client still works.
	if got := callText(t, c, "echo", map[string]any{"text": "still here"}); got != "still here" {
		t.Fatal(got)
	}
}

func TestContextDeadline(t *testing.T) {
	c := connected(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.CallTool(ctx, "hang", nil)
	var e *Error
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &e) || e.Status != StatusTimeout {
		t.Fatalf("deadline: %v", err)
	}
	if d := time.Since(start); d < 150*time.Millisecond || d > 2*time.Second {
		t.Fatalf("deadline fired after %v", d)
	}
	// The deadline covers every MRTR round (max_total_ms), handler time included.
	if err := c.OnElicitation(func(ctx context.Context, p json.RawMessage) (json.RawMessage, error) {
		time.Sleep(80 * time.Millisecond) // a deliberately slow handler: its time counts
		return answerForm(ctx, p)
	}); err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel2()
	if _, err := c.CallTool(ctx2, "three_rounds", nil); !errors.Is(err, ErrTimeout) {
		t.Fatalf("three_rounds under a 150 ms deadline: %v", err)
	}
}

func TestPerCallTimeout(t *testing.T) {
	c := connected(t, nil, WithRequestTimeout(10*time.Second))
	start := time.Now()
	_, err := c.CallTool(testCtx(t), "hang", nil, WithTimeout(150*time.Millisecond))
	if !errors.Is(err, ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("per-call timeout: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %v", d)
	}
	_, err = c.CallTool(testCtx(t), "slow", map[string]any{"ms": 300}, WithTimeout(100*time.Millisecond), WithMaxTotal(10*time.Second))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("slow: %v", err)
	}
	if got := callText(t, c, "slow", map[string]any{"ms": 50}, WithTimeout(-1)); got != "slept 50" {
		t.Fatal(got)
	}
	// Client default timeout.
	c2 := connected(t, nil, WithRequestTimeout(150*time.Millisecond))
	if _, err := c2.CallTool(testCtx(t), "hang", nil); !errors.Is(err, ErrTimeout) {
		t.Fatalf("client default timeout: %v", err)
	}
}

func TestWatcherGoroutinesEnd(t *testing.T) {
	c := connected(t, nil)
	callText(t, c, "echo", map[string]any{"text": "warm"})
	runtime.GC()
	before := runtime.NumGoroutine()
	for i := 0; i < 50; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if _, err := c.CallTool(ctx, "echo", map[string]any{"text": "x"}); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	// The watchers end after their calls return: polled, goroutine ends have no event.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before+2 {
		t.Fatalf("goroutines %d → %d after 50 calls with contexts", before, after)
	}
}

func TestCloseWithCallsInFlight(t *testing.T) {
	sig := newSignal(t)
	c := connected(t, sig.Args())
	handlerStarted := make(chan struct{})
	handlerCtxEnded := make(chan struct{})
	if err := c.OnElicitation(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		close(handlerStarted)
		<-ctx.Done()
		close(handlerCtxEnded)
		return nil, ctx.Err()
	}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for _, tool := range []string{"hang", "hang", "slow", "elicit_once"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var args any
			if tool == "slow" {
				args = map[string]any{"ms": 30000}
			}
			_, err := c.CallTool(context.Background(), tool, args)
			errs <- err
		}()
	}
	sub, err := c.Listen(testCtx(t), map[string]any{"toolsListChanged": true})
	if err != nil {
		t.Fatal(err)
	}
	nextErr := make(chan error, 1)
	var nextThread atomic.Int64
	go func() {
		nextThread.Store(int64(lockedThreadID()))
		_, err := sub.Next(context.Background())
		nextErr <- err
	}()
	<-handlerStarted
	// Every call reached the server (which answers none of them in time), and Next waits.
	sig.Wait(t, "request tools/call ", 4)
	waitParked(t, &nextThread)
	start := time.Now()
	// Close from several goroutines at once; all return after the first finished.
	var closers sync.WaitGroup
	for i := 0; i < 3; i++ {
		closers.Add(1)
		go func() { defer closers.Done(); c.Close() }()
	}
	within(t, 5*time.Second, "Close", closers.Wait)
	within(t, 5*time.Second, "calls in flight", wg.Wait)
	if d := time.Since(start); d > 4*time.Second {
		t.Fatalf("Close with calls in flight took %v", d)
	}
	close(errs)
	for err := range errs {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("in-flight call: %v (want ErrClosed)", err)
		}
	}
	select {
	case err := <-nextErr:
		if !errors.Is(err, ErrClosed) && !errors.Is(err, ErrCancelled) {
			t.Errorf("Next after Close: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Error("Next did not return after Close")
	}
	select {
	case <-handlerCtxEnded:
	case <-time.After(3 * time.Second):
		t.Error("the handler's context did not end at Close")
	}
	// Close again, and every method afterwards: ErrClosed, no crash.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	sub.Close()
	sub.Close()
	if _, err := c.CallTool(context.Background(), "echo", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after Close: %v", err)
	}
	if _, err := c.Connect(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("connect after Close: %v", err)
	}
	if err := c.OnSampling(answerSampling); !errors.Is(err, ErrClosed) {
		t.Fatalf("register after Close: %v", err)
	}
	if _, err := sub.Next(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after sub.Close: %v", err)
	}
	if c.Era() != EraNone {
		t.Fatal("era after close")
	}
}

func TestCloseFromHandlerAndListener(t *testing.T) {
	// Close from inside a handler goroutine.
	c := newFixture(t, nil)
	if err := c.OnElicitation(func(context.Context, json.RawMessage) (json.RawMessage, error) {
		c.Close()
		return answerForm(nil, json.RawMessage(`{}`))
	}); err != nil {
		t.Fatal(err)
	}
	within(t, 5*time.Second, "call whose handler closes the client", func() {
		if _, err := c.CallTool(testCtx(t), "elicit_once", nil); !errors.Is(err, ErrClosed) {
			t.Errorf("got %v", err)
		}
	})
	// Close from inside a log listener and a progress callback.
	c2 := newFixture(t, []string{"--stderr-banner", "close me"})
	closed := make(chan struct{})
	if err := c2.OnLog(func(_, _, msg string) {
		if msg == "close me" {
			c2.Close()
			close(closed)
		}
	}); err != nil {
		t.Fatal(err)
	}
	c2.Connect(testCtx(t))
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close from a listener did not return")
	}
	c3 := connected(t, nil)
	within(t, 5*time.Second, "Close from a progress callback", func() {
		c3.CallTool(testCtx(t), "progress", map[string]any{"steps": 3, "delay_ms": 20},
			WithProgress(func(float64, float64, string) { c3.Close() }))
	})
}

func TestFinalizerClosesForgottenClient(t *testing.T) {
	before := liveHandles.Load()
	func() {
		c, err := NewStdio(fixture, nil, WithShutdownGrace(200*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.OnElicitation(answerForm); err != nil {
			t.Fatal(err)
		}
		if err := c.OnLog(func(string, string, string) {}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Connect(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		sub, err := c.Listen(testCtx(t), map[string]any{"toolsListChanged": true})
		if err != nil {
			t.Fatal(err)
		}
		_ = sub
	}()
	deadline := time.Now().Add(10 * time.Second)
	for liveHandles.Load() != before {
		if time.Now().After(deadline) {
			t.Fatalf("handles still live: %d (before %d): the finalizer did not free the client", liveHandles.Load(), before)
		}
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCallsAfterServerGarbage(t *testing.T) {
	c := connected(t, nil)
	_, err := c.CallTool(testCtx(t), "garbage", nil)
	if !errors.Is(err, ErrProtocolViolation) {
		t.Fatalf("garbage: %v", err)
	}
	// Garbage on stdout is fatal for the connection: later calls fail promptly.
	within(t, 5*time.Second, "call after garbage", func() {
		if _, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"}); err == nil {
			t.Error("a call after garbage succeeded")
		}
	})
}

func TestConnectContext(t *testing.T) {
	// The server never answers server/discover: auto mode waits for the probe (5 s by
	// default). A cancelled context returns at once; Close interrupts the attempt.
	c := newFixture(t, []string{"--on-discover", "silent"})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Connect(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrTimeout) {
		t.Fatalf("Connect under a deadline: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Connect returned after %v", d)
	}
	within(t, 3*time.Second, "Close during a connect", func() { c.Close() })

	// A short probe timeout falls back to initialize.
	c2 := newFixture(t, []string{"--on-discover", "silent"}, WithProbeTimeout(200*time.Millisecond))
	info, err := c2.Connect(testCtx(t))
	if err != nil || info.Era != EraLegacy {
		t.Fatalf("fallback after a silent probe: %v %+v", err, info)
	}
}
