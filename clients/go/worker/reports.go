package worker

import (
	"sync"

	"google.golang.org/protobuf/proto"

	workerv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/worker/v1"
)

// reportsBytes bounds one Reports message: half of gRPC's usual 4 MiB limit,
// which the gateway's port keeps (a larger message would end the stream).
const reportsBytes = 2 << 20

// reports gathers starts and outcomes into Reports messages. The first
// caller while none is being sent sends, together with whatever the others
// queue meanwhile: alone each goes at once, under load one message carries
// many (no timer either way).
type reports struct {
	send func(*workerv1.Reports)
	// limit is the most bytes of one message (reportsBytes when zero).
	limit int

	mu       sync.Mutex
	started  []*workerv1.Started
	outcomes []*workerv1.Outcome
	flushing bool
	idle     func() // called when a flush ends with nothing left (drain waits on it)
}

func (r *reports) addStarted(ref *workerv1.AttemptRef) {
	r.mu.Lock()
	r.started = append(r.started, &workerv1.Started{Ref: ref})
	r.flush()
}

func (r *reports) addOutcome(o *workerv1.Outcome) {
	r.mu.Lock()
	r.outcomes = append(r.outcomes, o)
	r.flush()
}

// flush is entered with mu held and leaves it unlocked.
func (r *reports) flush() {
	if r.flushing {
		r.mu.Unlock()
		return
	}
	r.flushing = true
	for len(r.started) > 0 || len(r.outcomes) > 0 {
		batch := r.take()
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

// take is the next message: the starts first (an attempt's start and outcome may
// go together), then outcomes up to the size limit (at least one).
func (r *reports) take() *workerv1.Reports {
	limit := r.limit
	if limit <= 0 {
		limit = reportsBytes
	}
	batch := &workerv1.Reports{}
	size := 0
	n := 0
	for ; n < len(r.started); n++ {
		part := proto.Size(r.started[n]) + 8
		if n > 0 && size+part > limit {
			break
		}
		size += part
	}
	batch.Started, r.started = r.started[:n:n], r.started[n:]
	if len(r.started) > 0 {
		return batch
	}
	n = 0
	for ; n < len(r.outcomes); n++ {
		part := proto.Size(r.outcomes[n]) + 8
		if (size > 0 || n > 0) && size+part > limit {
			break
		}
		size += part
	}
	batch.Outcomes, r.outcomes = r.outcomes[:n:n], r.outcomes[n:]
	return batch
}

// sent reports whether nothing is queued or being sent.
func (r *reports) sent() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.flushing && len(r.started) == 0 && len(r.outcomes) == 0
}
