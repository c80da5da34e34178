package worker

import (
	"sync"

	workerv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/worker/v1"
)

// reports gathers starts and outcomes into Reports messages. The first
// caller while none is being sent sends, together with whatever the others
// queue meanwhile: alone each goes at once, under load one message carries
// many (no timer either way).
type reports struct {
	send func(*workerv1.Reports)

	mu       sync.Mutex
	pending  *workerv1.Reports
	flushing bool
	idle     func() // called when a flush ends with nothing left (drain waits on it)
}

func (r *reports) started(ref *workerv1.AttemptRef) {
	r.add(func(p *workerv1.Reports) { p.Started = append(p.Started, &workerv1.Started{Ref: ref}) })
}

func (r *reports) outcome(o *workerv1.Outcome) {
	r.add(func(p *workerv1.Reports) { p.Outcomes = append(p.Outcomes, o) })
}

func (r *reports) add(put func(*workerv1.Reports)) {
	r.mu.Lock()
	if r.pending == nil {
		r.pending = &workerv1.Reports{}
	}
	put(r.pending)
	if r.flushing {
		r.mu.Unlock()
		return
	}
	r.flushing = true
	for r.pending != nil {
		batch := r.pending
		r.pending = nil
		r.mu.Unlock()
		r.send(batch)
		r.mu.Lock()
	}
	r.flushing = false
	r.mu.Unlock()
	if r.idle != nil {
		r.idle()
	}
}

// sent reports whether nothing is queued or being sent.
func (r *reports) sent() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.flushing && r.pending == nil
}
