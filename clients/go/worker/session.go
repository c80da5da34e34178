package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	workerv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/worker/v1"
)

// defaultHeartbeat is used when a Welcome gives no heartbeat interval.
const defaultHeartbeat = 5 * time.Second

var (
	errStreamEnded = errors.New("worker: the gateway ended the stream")
	errClosed      = errors.New("worker: stream closed")
	errNoWelcome   = errors.New("worker: the gateway did not answer the Hello in time")
)

// key names an attempt within a stream.
type key struct {
	taskID  string
	attempt int32
}

// A session is one stream: hello, welcome, attempts, and its drain or end.
type session struct {
	w       *Worker
	stream  workerv1.WorkerService_WorkClient
	welcome *workerv1.Welcome
	// Parent of the bodies' contexts: the values of Run's ctx, not its end
	// (which drains rather than stops them).
	base context.Context

	sendMu sync.Mutex // a gRPC stream takes one Send at a time
	closed bool       // sends are dropped: half-closed, or the stream is over
	// Starts and outcomes, several to a message under load.
	reports reports

	mu sync.Mutex
	// The attempts this worker holds: handed over and neither reported nor
	// revoked. active of them run; the rest wait in queue for a slot (only
	// when the gateway sent more than the slots).
	held    map[key]*attempt
	queue   []*attempt
	active  int
	changed chan struct{} // a held attempt was let go (capacity 1: a wake-up)
}

// session runs one stream until it breaks (its error; welcomed tells if it
// got as far as the Welcome) or until ctx ends and the drain is over.
func (w *Worker) session(ctx context.Context, hello *workerv1.Hello) (welcomed bool, err error) {
	streamCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stream, err := w.stub.Work(streamCtx)
	if err != nil {
		return false, err
	}
	// Until the Welcome, ctx's end is a plain stop: there is nothing to drain.
	// A gateway that does not answer the Hello in time gets a new stream.
	stop := context.AfterFunc(ctx, cancel)
	late := time.AfterFunc(w.welcomeIn, cancel)
	welcome, err := greet(stream, hello)
	if !stop() {
		return false, ctx.Err()
	}
	if !late.Stop() {
		return false, fmt.Errorf("%w (%v)", errNoWelcome, w.welcomeIn)
	}
	if err != nil {
		return false, err
	}
	s := &session{
		w: w, stream: stream, welcome: welcome, base: context.WithoutCancel(ctx),
		held: map[key]*attempt{}, changed: make(chan struct{}, 1),
	}
	s.reports.send = func(r *workerv1.Reports) {
		_ = s.send(&workerv1.WorkRequest{Message: &workerv1.WorkRequest_Reports{Reports: r}})
	}
	s.reports.idle = s.wake
	s.reports.running = func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.active
	}
	s.reports.linger = reportsLinger
	w.mu.Lock()
	ready := append([]func(string){}, w.onReady...)
	w.mu.Unlock()
	for _, fn := range ready {
		fn(welcome.GetWorkerId())
	}

	received := make(chan error, 1)
	go func() { received <- s.receive() }()
	done := make(chan struct{})
	defer close(done)
	go s.heartbeat(done)

	select {
	case err := <-received:
		s.abandon(ErrConnectionLost)
		if err == nil {
			err = errStreamEnded
		}
		return true, err
	case <-ctx.Done():
		return true, s.drain(received)
	}
}

// greet sends the Hello and waits for the Welcome.
func greet(stream workerv1.WorkerService_WorkClient, hello *workerv1.Hello) (*workerv1.Welcome, error) {
	// A refused stream fails Send with io.EOF; Recv has the status.
	_ = stream.Send(&workerv1.WorkRequest{Message: &workerv1.WorkRequest_Hello{Hello: hello}})
	msg, err := stream.Recv()
	if errors.Is(err, io.EOF) {
		return nil, errStreamEnded
	}
	if err != nil {
		return nil, err
	}
	welcome := msg.GetWelcome()
	if welcome == nil {
		return nil, fmt.Errorf("worker: the gateway sent %T before its Welcome", msg.GetMessage())
	}
	return welcome, nil
}

// receive handles what the gateway sends until the stream ends (nil when it
// ended it cleanly).
func (s *session) receive() error {
	for {
		msg, err := s.stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch m := msg.GetMessage().(type) {
		case *workerv1.WorkResponse_Attempts:
			for _, a := range m.Attempts.GetAttempts() {
				s.take(a)
			}
		case *workerv1.WorkResponse_Cancel:
			if a := s.find(m.Cancel.GetRef()); a != nil {
				a.cancelRequested.Store(true)
				a.cancel(fmt.Errorf("%w: %s", ErrCancelled, m.Cancel.GetReason()))
			}
		case *workerv1.WorkResponse_Revoke:
			if a := s.find(m.Revoke.GetRef()); a != nil {
				a.revoked.Store(true)
				a.cancel(fmt.Errorf("%w: %s", ErrRevoked, m.Revoke.GetReason()))
				s.release(a)
			}
		case *workerv1.WorkResponse_Refused:
			ref := m.Refused.GetRef()
			s.w.log.Debug("taskyard worker: report refused", "task_id", ref.GetTaskId(),
				"attempt", ref.GetAttempt(), "reason", m.Refused.GetReason())
		default:
			s.w.log.Warn("taskyard worker: unexpected message from the gateway", "message", fmt.Sprintf("%T", m))
		}
	}
}

// take holds an attempt and starts it, or queues it while every slot is busy.
func (s *session) take(msg *workerv1.Attempt) {
	a := s.newAttempt(msg)
	s.mu.Lock()
	if s.held[a.key] != nil { // a second copy of a dispatch
		s.mu.Unlock()
		return
	}
	s.held[a.key] = a
	start := s.active < s.w.slots
	if start {
		s.active++
		a.active = true
	} else {
		s.queue = append(s.queue, a)
	}
	s.mu.Unlock()
	if start {
		go a.run()
	} else {
		s.w.log.Warn("taskyard worker: the gateway sent more attempts than slots; queued",
			"task_id", msg.GetTaskId(), "slots", s.w.slots)
	}
}

// find is the held attempt ref names, with its current lease token.
func (s *session) find(ref *workerv1.AttemptRef) *attempt {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.held[key{ref.GetTaskId(), ref.GetAttempt()}]
	if a == nil || a.ref.GetLeaseToken() != ref.GetLeaseToken() {
		return nil
	}
	return a
}

// release lets a held attempt go (reported or revoked), once: its slot goes
// to the next queued attempt, if any.
func (s *session) release(a *attempt) {
	s.mu.Lock()
	if s.held[a.key] != a {
		s.mu.Unlock()
		return
	}
	delete(s.held, a.key)
	var next *attempt
	if a.active {
		if len(s.queue) > 0 {
			next, s.queue = s.queue[0], s.queue[1:]
			next.active = true
		} else {
			s.active--
		}
	} else {
		for i, q := range s.queue {
			if q == a {
				s.queue = append(s.queue[:i], s.queue[i+1:]...)
				break
			}
		}
	}
	s.mu.Unlock()
	s.wake()
	if next != nil {
		go next.run()
	}
}

// wake tells a drain to look again (an attempt was let go, or reports went out).
func (s *session) wake() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// heartbeat renews the leases of what the stream holds until done.
func (s *session) heartbeat(done <-chan struct{}) {
	every := s.welcome.GetHeartbeatInterval().AsDuration()
	if every <= 0 {
		every = defaultHeartbeat
	}
	t := time.NewTicker(every)
	defer t.Stop()
	beat := &workerv1.WorkRequest{Message: &workerv1.WorkRequest_Heartbeat{Heartbeat: &workerv1.Heartbeat{}}}
	for {
		select {
		case <-done:
			return
		case <-t.C:
			_ = s.send(beat)
		}
	}
}

// drain asks for no new attempts, waits for the held ones to be reported,
// half-closes the stream and waits for the gateway to end it.
func (s *session) drain(received <-chan error) error {
	_ = s.send(&workerv1.WorkRequest{Message: &workerv1.WorkRequest_Drain{Drain: &workerv1.Drain{}}})
	var timeout <-chan time.Time
	if s.w.drainIn > 0 {
		t := time.NewTimer(s.w.drainIn)
		defer t.Stop()
		timeout = t.C
	}
	for {
		s.mu.Lock()
		n := len(s.held)
		s.mu.Unlock()
		// An outcome can still be queued behind another's send when its attempt is let go.
		if n == 0 && s.reports.sent() {
			break
		}
		select {
		case <-s.changed:
		case err := <-received:
			s.abandon(ErrConnectionLost)
			return err
		case <-timeout:
			s.abandon(ErrDrainTimeout)
			return ErrDrainTimeout
		}
	}
	s.sendMu.Lock()
	s.closed = true
	err := s.stream.CloseSend()
	s.sendMu.Unlock()
	if err != nil {
		return err
	}
	select {
	case err := <-received:
		return err
	case <-timeout:
		return ErrDrainTimeout
	}
}

// abandon gives up what the stream held (it broke, or a drain ran out of
// time): the bodies are cancelled with cause and report nothing, since the
// suite recovers their attempts as a dead pool's.
func (s *session) abandon(cause error) {
	s.sendMu.Lock()
	s.closed = true
	s.sendMu.Unlock()
	s.mu.Lock()
	held := s.held
	s.held, s.queue = map[key]*attempt{}, nil
	s.mu.Unlock()
	for _, a := range held {
		a.cancel(cause)
	}
}

// send sends one message; after the stream is closed or broken it is dropped
// (a broken stream's status comes from receive).
func (s *session) send(msg *workerv1.WorkRequest) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	if s.closed {
		return errClosed
	}
	return s.stream.Send(msg)
}
