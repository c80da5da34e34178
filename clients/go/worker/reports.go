package worker

import (
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	workerv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/worker/v1"
)

// reportsBytes bounds one Reports message: half of gRPC's usual 4 MiB limit,
// which the gateway's port keeps (a larger message would end the stream).
const reportsBytes = 2 << 20

// reportsLinger is the longest a start or an outcome waits for those of the
// other attempts running beside it, to share a message with them.
const reportsLinger = time.Millisecond

// reports gathers starts and outcomes into Reports messages. A report goes at
// once when no other attempt is running; beside others it waits up to
// reportsLinger for theirs (a gRPC Send does not block, so nothing else makes
// a burst of short attempts share messages: without the wait, each start and
// outcome costs the gateway a message of its own). What is queued while a
// send is in flight goes in the next message.
type reports struct {
	send func(*workerv1.Reports)
	// limit is the most bytes of one message (reportsBytes when zero).
	limit int
	// running is how many attempts are running, those with a queued outcome
	// included (nil: none besides the reporter, so nothing waits).
	running func() int
	linger  time.Duration

	mu       sync.Mutex
	started  []*workerv1.Started
	outcomes []*workerv1.Outcome
	flushing bool
	timer    *time.Timer // the linger, while armed
	idle     func()      // called when a flush ends with nothing left (drain waits on it)
}

func (r *reports) addStarted(ref *workerv1.AttemptRef) {
	r.mu.Lock()
	r.started = append(r.started, &workerv1.Started{Ref: ref})
	r.soon(1) // the starting attempt runs too
}

func (r *reports) addOutcome(o *workerv1.Outcome) {
	r.mu.Lock()
	r.outcomes = append(r.outcomes, o)
	r.soon(0)
}

// soon sends now, or arms the linger while other attempts run whose outcome
// is not queued yet (besides the reporter's own, counted in mine). Entered
// with mu held; leaves it unlocked.
func (r *reports) soon(mine int) {
	if r.flushing {
		r.mu.Unlock() // the sender takes it next
		return
	}
	if r.running != nil && r.linger > 0 && r.running()-len(r.outcomes)-mine > 0 {
		if r.timer == nil {
			r.timer = time.AfterFunc(r.linger, func() {
				r.mu.Lock()
				r.timer = nil
				r.flush()
			})
		}
		r.mu.Unlock()
		return
	}
	r.flush() // the last running attempt reported: no one left to wait for
}

// flush is entered with mu held and leaves it unlocked.
func (r *reports) flush() {
	if r.flushing {
		r.mu.Unlock()
		return
	}
	if r.timer != nil && r.timer.Stop() {
		r.timer = nil // sent now: the linger has nothing left to wait for
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
	return !r.flushing && r.timer == nil && len(r.started) == 0 && len(r.outcomes) == 0
}
