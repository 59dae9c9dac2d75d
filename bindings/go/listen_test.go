//go:build !windows

package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestListenModern(t *testing.T) {
	c := connected(t, nil)
	ctx := testCtx(t)
	sub, err := c.Listen(ctx, map[string]any{
		"toolsListChanged":      true,
		"resourceSubscriptions": []string{"fixture://static"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ack := mustJSON(t, sub.Acknowledged())
	if ack["toolsListChanged"] != true {
		t.Fatalf("acknowledged %s", sub.Acknowledged())
	}
	// Nothing yet: a short deadline ends Next with a timeout error.
	short, cancel := context.WithTimeout(ctx, 120*time.Millisecond)
	_, err = sub.Next(short)
	cancel()
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("idle Next: %v", err)
	}
	callText(t, c, "notify", nil)
	ev, err := sub.Next(ctx)
	if err != nil || ev.Method != "notifications/tools/list_changed" {
		t.Fatalf("after notify: %v %+v", err, ev)
	}
	callText(t, c, "touch", map[string]any{"uri": "fixture://static"})
	ev, err = sub.Next(ctx)
	if err != nil || ev.Method != "notifications/resources/updated" || !strings.Contains(string(ev.Params), "fixture://static") {
		t.Fatalf("after touch: %v %+v", err, ev)
	}
	// A cancelled context ends a waiting Next promptly.
	cctx, ccancel := context.WithCancel(ctx)
	time.AfterFunc(80*time.Millisecond, ccancel)
	start := time.Now()
	_, err = sub.Next(cctx)
	if !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Fatalf("cancelled Next: %v after %v", err, time.Since(start))
	}
	// The server ends every listen: Next reports the end.
	if got := callText(t, c, "end_listens", nil); got != "ended 1 listens" {
		t.Fatalf("end_listens: %q", got)
	}
	_, err = sub.Next(ctx)
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after the server ended the listen: %v", err)
	}
	sub.Close()
	sub.Close()
}

func TestListenCloseWakesNext(t *testing.T) {
	c := connected(t, nil)
	sub, err := c.Listen(testCtx(t), map[string]any{"promptsListChanged": true})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	var nextThread atomic.Int64
	go func() {
		nextThread.Store(int64(lockedThreadID()))
		_, err := sub.Next(context.Background()) // no deadline: blocks inside the library
		got <- err
	}()
	waitParked(t, &nextThread)
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); sub.Close() }()
	}
	within(t, 5*time.Second, "Subscription.Close", wg.Wait)
	select {
	case err := <-got:
		if !errors.Is(err, ErrCancelled) && !errors.Is(err, ErrClosed) {
			t.Fatalf("Next after Close: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Next did not return after Close")
	}
	// The client is unaffected.
	if got := callText(t, c, "echo", map[string]any{"text": "ok"}); got != "ok" {
		t.Fatal(got)
	}
}

func TestLegacyEra(t *testing.T) {
	sig := newSignal(t)
	c := newFixture(t, append([]string{"--era", "legacy"}, sig.Args()...))
	notes := make(chan string, 32)
	if err := c.OnNotification(func(method string, params json.RawMessage) {
		notes <- method + " " + string(params)
	}); err != nil {
		t.Fatal(err)
	}
	withAllHandlers(t, c)
	ctx := testCtx(t)
	info, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Era != EraLegacy || info.ProtocolVersion != "2025-11-25" || !strings.Contains(string(info.Implementation), "mcp-fixture-server") {
		t.Fatalf("info %+v", info)
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	if got := callText(t, c, "log_level", nil); got != "unset" {
		t.Fatalf("log_level: %q", got)
	}
	// Started calls: an unknown level is refused at start, before anything is sent.
	if err := c.SetLogLevel(ctx, "loud"); !errors.Is(err, ErrInvalidArg) {
		t.Fatalf("unknown level: %v", err)
	}
	if err := c.SetLogLevel(ctx, "debug"); err != nil {
		t.Fatal(err)
	}
	if got := callText(t, c, "log_level", nil); got != "debug" {
		t.Fatalf("log_level: %q", got)
	}
	if got := callText(t, c, "ping_client", nil); got != "client answered ping" {
		t.Fatalf("ping_client: %q", got)
	}
	if err := c.SubscribeResource(ctx, "fixture://static"); err != nil {
		t.Fatal(err)
	}
	callText(t, c, "touch", map[string]any{"uri": "fixture://static"})
	wait := func(prefix string) string {
		t.Helper()
		deadline := time.After(5 * time.Second)
		for {
			select {
			case n := <-notes:
				if strings.HasPrefix(n, prefix) {
					return n
				}
			case <-deadline:
				t.Fatalf("no %s notification", prefix)
			}
		}
	}
	if n := wait("notifications/resources/updated"); !strings.Contains(n, "fixture://static") {
		t.Fatal(n)
	}
	if err := c.UnsubscribeResource(ctx, "fixture://static"); err != nil {
		t.Fatal(err)
	}
	callText(t, c, "notify", nil)
	wait("notifications/tools/list_changed")
	wait("notifications/message")
	if err := c.NotifyRootsChanged(ctx); err != nil {
		t.Fatal(err)
	}
	sig.Wait(t, "notification notifications/roots/list_changed", 1)
	if got := callText(t, c, "roots_changed_count", nil); got != "1" {
		t.Fatalf("roots_changed_count: %q", got)
	}
	if _, err := c.Listen(ctx, map[string]any{"toolsListChanged": true}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Listen on legacy: %v", err)
	}
	// Paginated lists and prompts work on legacy too.
	raw, err := c.ListAll(ctx, KindPrompts)
	if err != nil || !strings.Contains(string(raw), "greeting") {
		t.Fatalf("prompts: %v %s", err, raw)
	}
}

func TestNotifyRootsChangedModernIsNoop(t *testing.T) {
	c := connected(t, nil)
	if err := c.NotifyRootsChanged(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := c.SetLogLevel(testCtx(t), "debug"); err != nil {
		t.Fatal(err)
	}
}
