package mcpclient

import "sync"

// eventQueue runs listener and progress callbacks in order on one goroutine per client, so
// Go code never runs on (or blocks) the library's dispatcher thread, and listeners may call
// the client freely. Closing drops what is queued; nothing starts after close.
type eventQueue struct {
	mu       sync.Mutex
	cond     *sync.Cond
	items    []func()
	closed   bool // drop what is queued and stop
	draining bool // run what is queued, then stop
	started  bool
	exited   chan struct{}
}

func newEventQueue() *eventQueue {
	q := &eventQueue{exited: make(chan struct{})}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *eventQueue) push(f func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || q.draining {
		return
	}
	q.items = append(q.items, f)
	if !q.started {
		q.started = true
		go q.run()
	}
	q.cond.Signal()
}

func (q *eventQueue) run() {
	defer close(q.exited)
	for {
		q.mu.Lock()
		for len(q.items) == 0 && !q.closed && !q.draining {
			q.cond.Wait()
		}
		if q.closed || len(q.items) == 0 {
			q.items = nil
			q.mu.Unlock()
			return
		}
		f := q.items[0]
		q.items[0] = nil
		q.items = q.items[1:]
		q.mu.Unlock()
		f()
	}
}

func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.items = nil
	q.cond.Broadcast()
	q.mu.Unlock()
}

// drain runs everything queued, then stops; it returns when the last callback has returned.
// Nothing may be pushed after drain starts (pushes are dropped).
func (q *eventQueue) drain() {
	q.mu.Lock()
	q.draining = true
	started := q.started
	q.cond.Broadcast()
	q.mu.Unlock()
	if started {
		<-q.exited
	}
}
