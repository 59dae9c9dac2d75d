package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
)

// The Go binding's async surface is its calls themselves: every method that takes a
// context.Context waits on the server, and each must run as a started call (a goroutine waiting
// on it holds no OS thread; an ending context cancels it through its handle at once). This test
// finds those methods by reflection over the method sets of *Client and *Subscription, calls
// each with placeholder arguments, and fails when one did not start a call (startedTotal), so a
// new blocking method cannot slip in.

// contextNotStarted lists context-taking methods that need no started call, with the reason.
// None today: keep it that way unless a method truly does not wait on the library.
var contextNotStarted = map[string]string{}

// placeholder is an argument of type t for the call: valid enough to reach the library.
func placeholder(t reflect.Type) reflect.Value {
	switch {
	case t == reflect.TypeOf(json.RawMessage(nil)):
		return reflect.ValueOf(json.RawMessage(`{}`))
	case t.Kind() == reflect.String:
		return reflect.ValueOf("x").Convert(t)
	case t.Kind() == reflect.Interface:
		return reflect.ValueOf(map[string]any{})
	default:
		return reflect.Zero(t)
	}
}

func TestEveryContextMethodIsStarted(t *testing.T) {
	ctxType := reflect.TypeOf((*context.Context)(nil)).Elem()
	c := connected(t, nil)
	sub, err := c.Listen(testCtx(t), map[string]any{"toolsListChanged": true})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	checked := 0
	for _, target := range []any{c, sub} {
		v := reflect.ValueOf(target)
		for i := 0; i < v.NumMethod(); i++ {
			m := v.Type().Method(i)
			ft := m.Type // the receiver is In(0)
			if ft.NumIn() < 2 || ft.In(1) != ctxType {
				continue
			}
			if _, ok := contextNotStarted[m.Name]; ok {
				continue
			}
			ctx, cancel := context.WithTimeout(testCtx(t), 300*time.Millisecond)
			args := []reflect.Value{reflect.ValueOf(ctx)}
			for j := 2; j < ft.NumIn(); j++ {
				if ft.IsVariadic() && j == ft.NumIn()-1 {
					break // no call options
				}
				args = append(args, placeholder(ft.In(j)))
			}
			before := startedTotal.Load()
			out := v.Method(i).Call(args)
			cancel()
			if startedTotal.Load() == before {
				t.Errorf("%T.%s waits without a started call: give it its *_start form", target, m.Name)
			}
			for _, o := range out {
				if s, ok := o.Interface().(*Subscription); ok && s != nil {
					s.Close()
				}
			}
			checked++
		}
	}
	// Connect, the calls and lists, tasks, skills, listen, the legacy requests, Next, ...
	if checked < 20 {
		t.Fatalf("only %d context-taking methods found", checked)
	}
}

// The operations that gained started forms, through the started path: tasks answered by hand,
// skills, listen, and the legacy subscription requests.
func TestTaskSkillAndListenCallsStarted(t *testing.T) {
	c := newFixture(t, nil, WithTasks(), WithManualInput("elicitation"))
	ids := make(chan string, 16)
	if err := c.OnTaskStatus(func(task json.RawMessage) {
		var v struct{ TaskID, Status string }
		if json.Unmarshal(task, &v) == nil && v.Status == "input_required" {
			ids <- v.TaskID
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(testCtx(t), "task_input", nil); err == nil {
		t.Fatal("task_input answered without input")
	}
	var id string
	select {
	case id = <-ids:
	case <-testCtx(t).Done():
		t.Fatal("no input_required status event")
	}
	before := startedTotal.Load()
	if err := c.UpdateTask(testCtx(t), id, json.RawMessage(`{"confirm":{"action":"accept","content":{"confirmed":true}}}`)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond) // the fixture flags polls closer than its pollIntervalMs
	res, err := c.ResumeTask(testCtx(t), id)
	if err != nil || !contains(text(t, res), "confirmed:") {
		t.Fatalf("resume: %s %v", res, err)
	}
	if task, err := c.GetTask(testCtx(t), id); err != nil || !contains(string(task), `"completed"`) {
		t.Fatalf("get: %s %v", task, err)
	}
	var rpc *RPCError
	if err := c.CancelTask(testCtx(t), "task-none"); !errors.As(err, &rpc) || rpc.Code != -32602 {
		t.Fatalf("cancel of an unknown task: %v", err)
	}
	if got := startedTotal.Load() - before; got != 4 {
		t.Fatalf("%d started calls for 4 task calls", got)
	}

	s := newFixture(t, []string{"--skills", "genuine"}, WithSkills())
	entry, err := s.GetSkill(testCtx(t), "skill://fixture/hello-world/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	md, err := s.ReadSkillFile(testCtx(t), entry, "")
	if err != nil || !contains(string(md), "Say hello") {
		t.Fatalf("read: %s %v", md, err)
	}
	if list, err := s.ListSkills(testCtx(t)); err != nil || !contains(string(list), "hello-world") {
		t.Fatalf("list: %s %v", list, err)
	}

	// A listen whose context ends before the acknowledgement gives up; the client goes on.
	m := connected(t, nil)
	gone, cancel := context.WithCancel(testCtx(t))
	cancel()
	if _, err := m.Listen(gone, map[string]any{"toolsListChanged": true}); err == nil {
		t.Fatal("listen with an ended context")
	}
	sub, err := m.Listen(testCtx(t), map[string]any{"toolsListChanged": true})
	if err != nil || !contains(string(sub.Acknowledged()), "toolsListChanged") {
		t.Fatalf("listen: %v", err)
	}
	callText(t, m, "notify", nil)
	if ev, err := sub.Next(testCtx(t)); err != nil || ev.Method != "notifications/tools/list_changed" {
		t.Fatalf("next: %+v %v", ev, err)
	}
	sub.Close()
	legacy := connected(t, []string{"--era", "legacy"})
	if err := legacy.SubscribeResource(testCtx(t), "fixture://static"); err != nil {
		t.Fatal(err)
	}
	if err := legacy.UnsubscribeResource(testCtx(t), "fixture://static"); err != nil {
		t.Fatal(err)
	}
	if err := legacy.NotifyRootsChanged(testCtx(t)); err != nil {
		t.Fatal(err)
	}
}
