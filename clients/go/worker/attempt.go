package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	taskyard "github.com/taskyard/taskyard/clients/go"
	workerv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/worker/v1"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Limits of what an attempt reports.
const (
	// MaxLogLineBytes is the longest log message sent; a longer one is cut.
	MaxLogLineBytes = 16 << 10
	// LogFlushInterval is the longest a log line waits to be sent.
	LogFlushInterval = 100 * time.Millisecond
	// maxLogBatch lines, or maxLogBatchBytes of messages (less when half of
	// Welcome.max_message_bytes is less), are sent at once.
	maxLogBatch      = 100
	maxLogBatchBytes = 256 << 10
	// maxFailureText bounds a failure's message and its traceback each.
	maxFailureText = 64 << 10
)

// traceContext reads the task's W3C trace context from the attempt.
var traceContext = propagation.TraceContext{}

// An attempt is one leased attempt of a session: its body's context, and the
// log lines waiting to be sent.
type attempt struct {
	s      *session
	msg    *workerv1.Attempt
	ref    *workerv1.AttemptRef
	key    key
	fn     Func
	ctx    context.Context
	cancel context.CancelCauseFunc
	active bool // it has a slot (guarded by s.mu)

	cancelRequested atomic.Bool // a Cancel came: the task ends CANCELLED
	revoked         atomic.Bool // its lease is gone: logs are no longer sent

	mu    sync.Mutex // the lines below, and the order of what is sent
	lines []*workerv1.LogLine
	bytes int
	timer *time.Timer
	ended bool
}

func (s *session) newAttempt(msg *workerv1.Attempt) *attempt {
	fn := s.w.funcs[msg.GetName()]
	if fn == nil {
		fn = func(context.Context, *Task) (any, error) {
			return nil, Fatal(Errorf("UnknownTaskName", "this worker has no function %q", msg.GetName()))
		}
	}
	ctx, cancel := context.WithCancelCause(s.base)
	return &attempt{
		s:      s,
		msg:    msg,
		ref:    &workerv1.AttemptRef{TaskId: msg.GetTaskId(), Attempt: msg.GetAttempt(), LeaseToken: msg.GetLeaseToken()},
		key:    key{msg.GetTaskId(), msg.GetAttempt()},
		fn:     fn,
		ctx:    ctx,
		cancel: cancel,
	}
}

// run runs the body and reports its outcome (even after a revoke: the
// gateway refuses it and counts it as late).
func (a *attempt) run() {
	defer a.cancel(context.Canceled)
	ctx := a.ctx
	task := a.task()
	if !task.Deadline.IsZero() {
		var stop context.CancelFunc
		ctx, stop = context.WithDeadlineCause(ctx, task.Deadline, ErrTimeout)
		defer stop()
	}
	ctx = traceContext.Extract(ctx, propagation.MapCarrier(a.msg.GetTraceHeaders()))
	ctx, span := a.s.w.tracer.Start(ctx, "process "+task.Name,
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(
			attribute.String("taskyard.task_id", task.ID),
			attribute.Int("taskyard.attempt", task.Attempt),
		))

	a.s.reports.addStarted(a.ref)
	value, err := a.call(ctx, task)
	out := a.outcome(ctx, value, err)
	switch {
	case out.GetFailure() != nil:
		span.SetStatus(otelcodes.Error, out.GetFailure().GetMessage())
	case out.GetCancelled():
		span.SetStatus(otelcodes.Error, "cancelled")
	default:
		span.SetStatus(otelcodes.Ok, "")
	}
	span.End()

	a.mu.Lock()
	a.ended = true
	if a.timer != nil {
		a.timer.Stop()
	}
	a.flushLocked() // its lines go before its outcome
	a.s.reports.addOutcome(out)
	a.mu.Unlock()
	a.s.release(a)
}

func (a *attempt) task() *Task {
	m := a.msg
	t := &Task{
		ID:          m.GetTaskId(),
		Name:        m.GetName(),
		Attempt:     int(m.GetAttempt()),
		Args:        m.GetArgs().AsSlice(),
		Kwargs:      m.GetKwargs().AsMap(),
		Labels:      m.GetLabels(),
		Queue:       m.GetQueue(),
		Priority:    taskyard.Priority(m.GetPriority()),
		ParentID:    m.GetParentId(),
		RootID:      m.GetRootId(),
		Tenant:      m.GetTenant(),
		RetriesLeft: int(m.GetRetriesLeft()),
		run:         a,
	}
	if m.GetDeadline() != nil {
		t.Deadline = m.GetDeadline().AsTime()
	}
	return t
}

// panicError is a body's panic, with the stack where it happened.
type panicError struct {
	value any
	stack []byte
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

func (a *attempt) call(ctx context.Context, t *Task) (value any, err error) {
	defer func() {
		if r := recover(); r != nil {
			value, err = nil, &panicError{value: r, stack: debug.Stack()}
		}
	}()
	return a.fn(ctx, t)
}

// outcome is what the body's return makes of the attempt.
func (a *attempt) outcome(ctx context.Context, value any, err error) *workerv1.Outcome {
	out := &workerv1.Outcome{Ref: a.ref, Cancelled: a.cancelRequested.Load()}
	if err == nil {
		var result *structpb.Value
		if result, err = a.result(value); err == nil {
			out.Outcome = &workerv1.Outcome_Result{Result: result}
			return out
		}
	}
	f := &workerv1.Failure{
		Type:      failureType(err),
		Message:   cut(err.Error(), maxFailureText),
		Retryable: true,
	}
	var p *panicError
	var fatal *fatalError
	var after *retryAfterError
	switch {
	case errors.As(err, &p):
		f.Type, f.Traceback = "panic", cut(string(p.stack), maxFailureText)
	case errors.Is(err, context.DeadlineExceeded) && errors.Is(context.Cause(ctx), ErrTimeout):
		f.Type = "TimeoutError"
	}
	if errors.As(err, &fatal) {
		f.Retryable = false
	}
	if errors.As(err, &after) {
		f.RetryDelay = durationpb.New(after.delay)
	}
	out.Outcome = &workerv1.Outcome_Failure{Failure: f}
	return out
}

// result converts what the body returned to JSON, within Welcome.max_result_bytes.
func (a *attempt) result(value any) (*structpb.Value, error) {
	data, err := json.Marshal(value)
	if err != nil {
		return nil, Fatal(Errorf("TypeError", "result is not JSON: %v", err))
	}
	if limit := a.s.welcome.GetMaxResultBytes(); limit > 0 && int64(len(data)) > limit {
		return nil, Fatal(Errorf("ResultTooLarge", "result is %d bytes of JSON, over the limit of %d", len(data), limit))
	}
	v := &structpb.Value{}
	if err := protojson.Unmarshal(data, v); err != nil {
		return nil, Fatal(Errorf("TypeError", "result is not JSON: %v", err))
	}
	return v, nil
}

func (a *attempt) log(level, msg string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ended || a.revoked.Load() {
		return
	}
	msg = cut(msg, MaxLogLineBytes)
	a.lines = append(a.lines, &workerv1.LogLine{Time: timestamppb.Now(), Level: level, Message: msg})
	a.bytes += len(msg)
	if len(a.lines) >= maxLogBatch || a.bytes >= a.s.logBatchBytes() {
		a.flushLocked()
		return
	}
	if a.timer == nil {
		a.timer = time.AfterFunc(LogFlushInterval, func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.timer = nil
			a.flushLocked()
		})
	}
}

func (a *attempt) progress(fraction float64, msg string) {
	if math.IsNaN(fraction) {
		fraction = 0
	}
	fraction = min(max(fraction, 0), 1)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ended || a.revoked.Load() {
		return
	}
	a.flushLocked()
	_ = a.s.send(&workerv1.WorkRequest{Message: &workerv1.WorkRequest_Progress{Progress: &workerv1.Progress{
		Ref: a.ref, Fraction: fraction, Message: cut(msg, MaxLogLineBytes),
	}}})
}

// flushLocked sends the waiting log lines (a.mu held).
func (a *attempt) flushLocked() {
	if len(a.lines) == 0 {
		return
	}
	lines := a.lines
	a.lines, a.bytes = nil, 0
	if a.revoked.Load() {
		return
	}
	_ = a.s.send(&workerv1.WorkRequest{Message: &workerv1.WorkRequest_Logs{Logs: &workerv1.LogLines{Ref: a.ref, Lines: lines}}})
}

// logBatchBytes is when a batch of log lines is sent: at most half of the
// largest message the gateway takes, so that a batch (with its framing) fits.
func (s *session) logBatchBytes() int {
	limit := maxLogBatchBytes
	if m := s.welcome.GetMaxMessageBytes(); m > 0 && m/2 < int64(limit) {
		limit = int(m / 2)
	}
	return limit
}

// cut shortens s to at most n bytes, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
