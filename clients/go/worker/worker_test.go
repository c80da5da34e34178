package worker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	taskyard "github.com/taskyard/taskyard/clients/go"
	workerv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/worker/v1"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func newWorker(t *testing.T, client *taskyard.Client, cfg Config) *Worker {
	t.Helper()
	cfg.Logger = slog.New(slog.DiscardHandler)
	w, err := New(client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func mustRegister(t *testing.T, w *Worker, name string, fn Func, opts ...TaskOption) {
	t.Helper()
	if err := w.Register(name, fn, opts...); err != nil {
		t.Fatal(err)
	}
}

func att(id, name string, args ...any) *workerv1.Attempt {
	l, err := structpb.NewList(args)
	if err != nil {
		panic(err)
	}
	return &workerv1.Attempt{TaskId: id, Name: name, Args: l, Attempt: 1, LeaseToken: "lease-" + id}
}

func echo(_ context.Context, t *Task) (any, error) { return t.Args[0], nil }

// waitCtx stops until ctx ends, sends its cause to causes, and returns ctx's error.
func waitCtx(causes chan<- error) Func {
	return func(ctx context.Context, _ *Task) (any, error) {
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return nil, ctx.Err()
	}
}

func recvErr(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(waitFor):
		t.Fatal("nothing received")
		return nil
	}
}

// shutdown drains a worker that holds nothing and checks Run returns nil.
func shutdown(t *testing.T, r *running, fs *fakeStream) {
	t.Helper()
	r.cancel()
	if fs.next().GetDrain() == nil {
		t.Fatal("no Drain after Run's context ended")
	}
	if msg := fs.nextAny(); msg != nil {
		t.Fatalf("after the drain the worker sent %v, want it to half-close", msg)
	}
	fs.end <- nil
	if err := r.result(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestHelloWelcomeAndDrain(t *testing.T) {
	gw, client := startGateway(t, testToken)
	w := newWorker(t, client, Config{Name: "billing-go", Slots: 3})
	mustRegister(t, w, "billing.charge", echo, WithTimeout(5*time.Second), WithMaxRetries(2),
		WithRateLimit("10/s"), WithConcurrency(3), WithLimitKey("account"))
	mustRegister(t, w, "billing.plain", echo)
	ready := make(chan string, 1)
	w.OnReady(func(id string) { ready <- id })
	r := start(t, w)
	fs := gw.accept(t)
	hello := fs.welcome("w-1", time.Minute)

	if hello.GetWorkerName() != "billing-go" || hello.GetSlots() != 3 || hello.GetSdk() != "go/"+Version {
		t.Errorf("hello = %v", hello)
	}
	if len(hello.GetTasks()) != 2 {
		t.Fatalf("declarations = %v", hello.GetTasks())
	}
	d := hello.GetTasks()[0]
	if d.GetName() != "billing.charge" || d.GetTimeout().AsDuration() != 5*time.Second || d.GetMaxRetries() != 2 ||
		d.GetRateLimit() != "10/s" || d.GetConcurrency() != 3 || d.GetLimitKey() != "account" {
		t.Errorf("declaration = %v", d)
	}
	if p := hello.GetTasks()[1]; p.GetName() != "billing.plain" || p.Timeout != nil || p.MaxRetries != nil {
		t.Errorf("plain declaration = %v", p)
	}
	select {
	case id := <-ready:
		if id != "w-1" {
			t.Errorf("OnReady(%q), want w-1", id)
		}
	case <-time.After(waitFor):
		t.Fatal("OnReady not called")
	}
	shutdown(t, r, fs)
}

// outcomes reads until n outcomes came, checking each attempt's Started came
// first, and returns them by task id.
func outcomes(t *testing.T, fs *fakeStream, n int) map[string]*workerv1.Outcome {
	t.Helper()
	started := map[string]bool{}
	out := map[string]*workerv1.Outcome{}
	for len(out) < n {
		msg := fs.next()
		switch {
		case msg.GetStarted() != nil:
			started[msg.GetStarted().GetRef().GetTaskId()] = true
		case msg.GetOutcome() != nil:
			id := msg.GetOutcome().GetRef().GetTaskId()
			if !started[id] {
				t.Errorf("outcome of %s before its Started", id)
			}
			out[id] = msg.GetOutcome()
		}
	}
	return out
}

func TestOutcomes(t *testing.T) {
	gw, client := startGateway(t, testToken)
	w := newWorker(t, client, Config{Slots: 8})
	mustRegister(t, w, "echo", echo)
	mustRegister(t, w, "fatal", func(context.Context, *Task) (any, error) {
		return nil, Fatal(Errorf("Fatal", "no"))
	})
	mustRegister(t, w, "flaky", func(_ context.Context, t *Task) (any, error) {
		return nil, RetryAfter(2*time.Second, Errorf("Flaky", "attempt %d", t.Attempt))
	})
	mustRegister(t, w, "wrapped", func(context.Context, *Task) (any, error) {
		return nil, fmt.Errorf("reading config: %w", &fs.PathError{Op: "open", Path: "/x", Err: fs.ErrNotExist})
	})
	mustRegister(t, w, "panics", func(context.Context, *Task) (any, error) { panic("boom") })
	mustRegister(t, w, "unjson", func(context.Context, *Task) (any, error) { return make(chan int), nil })
	r := start(t, w)
	fs := gw.accept(t)
	fs.welcome("w-1", time.Minute)
	unknown := att("t7", "nobody")
	fs.attempts(att("t1", "echo", map[string]any{"a": []any{1, "x"}}), att("t2", "fatal"), att("t3", "flaky"),
		att("t4", "wrapped"), att("t5", "panics"), att("t6", "unjson"), unknown)

	got := outcomes(t, fs, 7)
	if v := got["t1"].GetResult().AsInterface(); fmt.Sprint(v) != "map[a:[1 x]]" {
		t.Errorf("echo result = %v", v)
	}
	for id, want := range map[string]struct {
		typ, msg  string
		retryable bool
	}{
		"t2": {"Fatal", "no", false},
		"t3": {"Flaky", "attempt 1", true},
		"t4": {"*fs.PathError", "reading config: open /x: file does not exist", true},
		"t5": {"panic", "panic: boom", true},
		"t6": {"TypeError", "", false},
		"t7": {"UnknownTaskName", "", false},
	} {
		f := got[id].GetFailure()
		if f.GetType() != want.typ || f.GetRetryable() != want.retryable || (want.msg != "" && f.GetMessage() != want.msg) {
			t.Errorf("%s failure = %v, want %+v", id, f, want)
		}
	}
	if d := got["t3"].GetFailure().GetRetryDelay().AsDuration(); d != 2*time.Second {
		t.Errorf("flaky retry delay = %v", d)
	}
	if tb := got["t5"].GetFailure().GetTraceback(); !strings.Contains(tb, "worker_test.go") {
		t.Errorf("panic traceback = %q", tb)
	}
	if !strings.EqualFold(got["t7"].GetRef().GetLeaseToken(), unknown.GetLeaseToken()) {
		t.Errorf("outcome ref = %v", got["t7"].GetRef())
	}
	shutdown(t, r, fs)
}

func TestCancelEndsBodyAndReportsCancelled(t *testing.T) {
	gw, client := startGateway(t, testToken)
	w := newWorker(t, client, Config{})
	causes := make(chan error, 1)
	mustRegister(t, w, "sleep", waitCtx(causes))
	r := start(t, w)
	fs := gw.accept(t)
	fs.welcome("w-1", time.Minute)
	a := att("t1", "sleep")
	fs.attempts(a)
	if fs.next().GetStarted() == nil {
		t.Fatal("no Started")
	}
	// A cancel naming another lease is not this attempt's: only the second one counts.
	stale := ref(a)
	stale.LeaseToken = "old"
	fs.send(&workerv1.WorkResponse{Message: &workerv1.WorkResponse_Cancel{Cancel: &workerv1.Cancel{Ref: stale, Reason: "stale"}}})
	fs.send(&workerv1.WorkResponse{Message: &workerv1.WorkResponse_Cancel{Cancel: &workerv1.Cancel{Ref: ref(a), Reason: "by user"}}})

	cause := recvErr(t, causes)
	if !errors.Is(cause, ErrCancelled) || !strings.Contains(cause.Error(), "by user") {
		t.Errorf("cause = %v", cause)
	}
	out := fs.next().GetOutcome()
	if out == nil || !out.GetCancelled() || out.GetRef().GetLeaseToken() != a.GetLeaseToken() {
		t.Fatalf("outcome = %v, want cancelled", out)
	}
	shutdown(t, r, fs)
}

func TestRevokeFreesSlotAndLateOutcomeIsSent(t *testing.T) {
	gw, client := startGateway(t, testToken)
	w := newWorker(t, client, Config{Slots: 1})
	causes := make(chan error, 1)
	release := make(chan struct{})
	mustRegister(t, w, "stubborn", func(ctx context.Context, _ *Task) (any, error) {
		<-ctx.Done()
		causes <- context.Cause(ctx)
		<-release // ignores the cancel
		return "done", nil
	})
	mustRegister(t, w, "echo", echo)
	r := start(t, w)
	fs := gw.accept(t)
	fs.welcome("w-1", time.Minute)
	a1 := att("t1", "stubborn")
	fs.attempts(a1)
	if fs.next().GetStarted() == nil {
		t.Fatal("no Started")
	}
	fs.send(&workerv1.WorkResponse{Message: &workerv1.WorkResponse_Revoke{Revoke: &workerv1.Revoke{Ref: ref(a1), Reason: "cancel not honoured"}}})
	if cause := recvErr(t, causes); !errors.Is(cause, ErrRevoked) {
		t.Errorf("cause = %v", cause)
	}
	// The only slot is free again while the revoked body still runs.
	fs.attempts(att("t2", "echo", "x"))
	if s := fs.next().GetStarted(); s.GetRef().GetTaskId() != "t2" {
		t.Fatalf("next = %v, want t2 started", s)
	}
	if o := fs.next().GetOutcome(); o.GetRef().GetTaskId() != "t2" || o.GetResult().GetStringValue() != "x" {
		t.Fatalf("next = %v, want t2's outcome", o)
	}
	close(release)
	late := fs.next().GetOutcome()
	if late.GetRef().GetTaskId() != "t1" || late.GetResult().GetStringValue() != "done" {
		t.Fatalf("late outcome = %v", late)
	}
	fs.send(&workerv1.WorkResponse{Message: &workerv1.WorkResponse_Refused{Refused: &workerv1.Refused{Ref: ref(a1), Reason: "late"}}})
	shutdown(t, r, fs)
}

func TestDrainFinishesRunningAttempt(t *testing.T) {
	gw, client := startGateway(t, testToken)
	w := newWorker(t, client, Config{})
	release := make(chan struct{})
	mustRegister(t, w, "work", func(ctx context.Context, _ *Task) (any, error) {
		select {
		case <-release:
			return "finished", nil
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	})
	r := start(t, w)
	fs := gw.accept(t)
	fs.welcome("w-1", time.Minute)
	fs.attempts(att("t1", "work"))
	if fs.next().GetStarted() == nil {
		t.Fatal("no Started")
	}
	r.cancel()
	if fs.next().GetDrain() == nil {
		t.Fatal("no Drain")
	}
	select {
	case err := <-r.done:
		t.Fatalf("Run returned (%v) while an attempt ran", err)
	default:
	}
	close(release)
	if o := fs.next().GetOutcome(); o.GetResult().GetStringValue() != "finished" {
		t.Fatalf("outcome = %v", o)
	}
	if msg := fs.nextAny(); msg != nil {
		t.Fatalf("after the last outcome: %v, want the half-close", msg)
	}
	fs.end <- nil
	if err := r.result(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestHeartbeats(t *testing.T) {
	gw, client := startGateway(t, testToken)
	w := newWorker(t, client, Config{})
	mustRegister(t, w, "echo", echo)
	r := start(t, w)
	fs := gw.accept(t)
	fs.welcome("w-1", 5*time.Millisecond)
	for i := range 3 {
		if msg := fs.nextAny(); msg.GetHeartbeat() == nil {
			t.Fatalf("message %d = %v, want a Heartbeat", i, msg)
		}
	}
	shutdown(t, r, fs)
}

func TestUnauthenticatedEndsRun(t *testing.T) {
	_, client := startGateway(t, "wrong-token")
	w := newWorker(t, client, Config{})
	mustRegister(t, w, "echo", echo)
	err := start(t, w).result(t)
	if status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "UNAUTHENTICATED") {
		t.Fatalf("Run = %v, want UNAUTHENTICATED", err)
	}
}

func TestSlotsNeverExceeded(t *testing.T) {
	gw, client := startGateway(t, testToken)
	w := newWorker(t, client, Config{Slots: 2})
	var runningNow, most atomic.Int32
	releases := map[string]chan struct{}{}
	for _, id := range []string{"t1", "t2", "t3", "t4"} {
		releases[id] = make(chan struct{})
	}
	mustRegister(t, w, "hold", func(_ context.Context, t *Task) (any, error) {
		n := runningNow.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		<-releases[t.ID]
		runningNow.Add(-1)
		return t.ID, nil
	})
	r := start(t, w)
	fs := gw.accept(t)
	fs.welcome("w-1", time.Minute)
	// More than the slots in one batch (a gateway should not): two run, two wait.
	fs.attempts(att("t1", "hold"), att("t2", "hold"), att("t3", "hold"), att("t4", "hold"))
	var first []string
	for range 2 {
		first = append(first, fs.next().GetStarted().GetRef().GetTaskId())
	}
	if first[0] == "" || first[1] == "" {
		t.Fatalf("started %v", first)
	}
	// Each outcome frees a slot for one waiting attempt (whose start may share the
	// outcome's Reports: the fake lists a Reports' starts first); most counts the rest.
	var waited []string
	for _, id := range first {
		close(releases[id])
		outcome, next := false, ""
		for !outcome || next == "" {
			msg := fs.next()
			switch {
			case msg.GetOutcome() != nil:
				if o := msg.GetOutcome(); o.GetRef().GetTaskId() != id {
					t.Fatalf("outcome of %s, want %s's", o.GetRef().GetTaskId(), id)
				}
				outcome = true
			case msg.GetStarted() != nil:
				if next != "" {
					t.Fatalf("two attempts started for %s's slot", id)
				}
				next = msg.GetStarted().GetRef().GetTaskId()
			}
		}
		if next != "t3" && next != "t4" {
			t.Fatalf("started %q after %s's outcome", next, id)
		}
		waited = append(waited, next)
	}
	for _, id := range waited {
		close(releases[id])
	}
	for n := 0; n < 2; {
		if fs.next().GetOutcome() != nil {
			n++
		}
	}
	if m := most.Load(); m > 2 {
		t.Errorf("%d attempts ran at once, slots 2", m)
	}
	shutdown(t, r, fs)
}

func TestDeadlineEndsBodyAsTimeout(t *testing.T) {
	gw, client := startGateway(t, testToken)
	w := newWorker(t, client, Config{})
	causes := make(chan error, 1)
	mustRegister(t, w, "sleep", waitCtx(causes))
	r := start(t, w)
	fs := gw.accept(t)
	fs.welcome("w-1", time.Minute)
	a := att("t1", "sleep")
	a.Deadline = timestamppb.New(time.Now().Add(20 * time.Millisecond))
	fs.attempts(a)
	if cause := recvErr(t, causes); !errors.Is(cause, ErrTimeout) {
		t.Errorf("cause = %v", cause)
	}
	got := outcomes(t, fs, 1)
	if f := got["t1"].GetFailure(); f.GetType() != "TimeoutError" {
		t.Errorf("failure = %v", f)
	}
	shutdown(t, r, fs)
}

func TestLogsAndProgress(t *testing.T) {
	gw, client := startGateway(t, testToken)
	w := newWorker(t, client, Config{})
	mustRegister(t, w, "chatty", func(_ context.Context, t *Task) (any, error) {
		t.Log("info", "one")
		t.Logf("info", "t%s", "wo")
		t.Log("info", "three")
		t.Progress(0.5, "half")
		for i := range 250 {
			t.Logf("debug", "line %d", i)
		}
		return "ok", nil
	})
	r := start(t, w)
	fs := gw.accept(t)
	fs.welcome("w-1", time.Minute)
	fs.attempts(att("t1", "chatty"))
	var before, after []string
	progressed := false
	for {
		msg := fs.next()
		if msg.GetOutcome() != nil {
			if msg.GetOutcome().GetResult().GetStringValue() != "ok" {
				t.Errorf("outcome = %v", msg.GetOutcome())
			}
			break
		}
		if p := msg.GetProgress(); p != nil {
			if p.GetFraction() != 0.5 || p.GetMessage() != "half" || p.GetRef().GetTaskId() != "t1" {
				t.Errorf("progress = %v", p)
			}
			progressed = true
		}
		if l := msg.GetLogs(); l != nil {
			if len(l.GetLines()) > maxLogBatch {
				t.Errorf("a batch of %d lines", len(l.GetLines()))
			}
			for _, line := range l.GetLines() {
				if progressed {
					after = append(after, line.GetMessage())
				} else {
					before = append(before, line.GetLevel()+":"+line.GetMessage())
				}
			}
		}
	}
	if strings.Join(before, ",") != "info:one,info:two,info:three" || !progressed {
		t.Errorf("lines before progress = %v (progress %v)", before, progressed)
	}
	if len(after) != 250 || after[0] != "line 0" || after[249] != "line 249" {
		t.Errorf("%d lines after progress: %v ... ", len(after), after[:min(3, len(after))])
	}
	shutdown(t, r, fs)
}

func TestBrokenStreamReconnectsAndAbandons(t *testing.T) {
	gw, client := startGateway(t, testToken)
	w := newWorker(t, client, Config{})
	causes := make(chan error, 1)
	mustRegister(t, w, "sleep", waitCtx(causes))
	ready := make(chan string, 2)
	w.OnReady(func(id string) { ready <- id })
	r := start(t, w)
	fs := gw.accept(t)
	fs.welcome("w-1", time.Minute)
	fs.attempts(att("t1", "sleep"))
	if fs.next().GetStarted() == nil {
		t.Fatal("no Started")
	}
	fs.end <- status.Error(codes.Unavailable, "gateway stopping")
	if cause := recvErr(t, causes); !errors.Is(cause, ErrConnectionLost) {
		t.Errorf("cause = %v", cause)
	}
	fs2 := gw.accept(t)
	fs2.welcome("w-2", time.Minute)
	for _, want := range []string{"w-1", "w-2"} {
		select {
		case id := <-ready:
			if id != want {
				t.Errorf("OnReady(%q), want %q", id, want)
			}
		case <-time.After(waitFor):
			t.Fatal("OnReady not called")
		}
	}
	// The abandoned attempt reports nothing on the new stream: its Drain comes first.
	shutdown(t, r, fs2)
}

func TestChildContinuesTrace(t *testing.T) {
	gw, client := startGateway(t, testToken)
	w := newWorker(t, client, Config{})
	traces := make(chan trace.TraceID, 1)
	mustRegister(t, w, "parent", func(ctx context.Context, t *Task) (any, error) {
		traces <- trace.SpanContextFromContext(ctx).TraceID()
		return t.SubmitChild(ctx, "echo", t.Args[0])
	})
	r := start(t, w)
	fs := gw.accept(t)
	fs.welcome("w-1", time.Minute)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	a := att("t1", "parent", "hi")
	a.TraceHeaders = map[string]string{"traceparent": "00-" + traceID + "-00f067aa0ba902b7-01"}
	fs.attempts(a)
	got := outcomes(t, fs, 1)
	if id := got["t1"].GetResult().GetStringValue(); id != "child-1" {
		t.Errorf("result = %v", got["t1"])
	}
	select {
	case id := <-traces:
		if id.String() != traceID {
			t.Errorf("the body's trace = %s, want the task's", id)
		}
	default:
		t.Fatal("the body did not run")
	}
	gw.mu.Lock()
	sub, md := gw.submits[0].GetTask(), gw.submitMD[0]
	gw.mu.Unlock()
	if sub.GetParentId() != "t1" || sub.GetName() != "echo" || sub.GetArgs().GetValues()[0].GetStringValue() != "hi" {
		t.Errorf("child = %v", sub)
	}
	if tp := md.Get("traceparent"); len(tp) != 1 || !strings.Contains(tp[0], traceID) {
		t.Errorf("child's traceparent = %v", tp)
	}
	shutdown(t, r, fs)
}

func TestRegisterRefusesBadInput(t *testing.T) {
	_, client := startGateway(t, testToken)
	w := newWorker(t, client, Config{})
	mustRegister(t, w, "echo", echo)
	for name, err := range map[string]error{
		"bad name":      w.Register("no spaces", echo),
		"twice":         w.Register("echo", echo),
		"nil function":  w.Register("nil", nil),
		"zero timeout":  w.Register("t", echo, WithTimeout(0)),
		"retries < 0":   w.Register("r", echo, WithMaxRetries(-1)),
		"negative conc": w.Register("c", echo, WithConcurrency(-2)),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := New(client, Config{Slots: MaxSlots + 1}); err == nil {
		t.Error("New accepted 257 slots")
	}
}

func TestFailureTypeAndCodeName(t *testing.T) {
	for err, want := range map[error]string{
		Errorf("Flaky", "x"):                                          "Flaky",
		Fatal(fmt.Errorf("a: %w", Errorf("B", ""))):                   "B",
		errors.New("plain"):                                           "*errors.errorString",
		RetryAfter(time.Second, fmt.Errorf("w: %w", &fs.PathError{})): "*fs.PathError",
	} {
		if got := failureType(err); got != want {
			t.Errorf("failureType(%v) = %q, want %q", err, got, want)
		}
	}
	for c, want := range map[codes.Code]string{
		codes.Unauthenticated: "UNAUTHENTICATED", codes.PermissionDenied: "PERMISSION_DENIED", codes.OK: "OK",
	} {
		if got := codeName(c); got != want {
			t.Errorf("codeName(%v) = %q", c, got)
		}
	}
}

func TestHelloWithoutWelcomeOpensNewStream(t *testing.T) {
	gw, client := startGateway(t, testToken)
	w := newWorker(t, client, Config{WelcomeTimeout: 50 * time.Millisecond})
	mustRegister(t, w, "echo", echo)
	ready := make(chan string, 1)
	w.OnReady(func(id string) { ready <- id })
	r := start(t, w)
	silent := gw.accept(t)
	if silent.next().GetHello() == nil {
		t.Fatal("no Hello")
	}
	// No answer: the worker gives up on this stream and says Hello on another.
	fs := gw.accept(t)
	fs.welcome("w-2", time.Minute)
	select {
	case id := <-ready:
		if id != "w-2" {
			t.Errorf("OnReady(%q), want w-2", id)
		}
	case <-time.After(waitFor):
		t.Fatal("OnReady not called")
	}
	shutdown(t, r, fs)
}

func TestLogBatchesFitTheGatewaysMessageLimit(t *testing.T) {
	gw, client := startGateway(t, testToken)
	w := newWorker(t, client, Config{})
	line := strings.Repeat("x", 500)
	mustRegister(t, w, "loud", func(_ context.Context, t *Task) (any, error) {
		for range 40 {
			t.Log("info", line)
		}
		return nil, nil
	})
	r := start(t, w)
	fs := gw.accept(t)
	const limit = 4096
	fs.welcomeWith(&workerv1.Welcome{WorkerId: "w-1", HeartbeatInterval: durationpb.New(time.Minute), MaxMessageBytes: limit})
	fs.attempts(att("t1", "loud"))
	lines := 0
	for {
		msg := fs.next()
		if msg.GetOutcome() != nil {
			break
		}
		if msg.GetLogs() != nil {
			if size := proto.Size(msg); size > limit {
				t.Errorf("a batch of %d lines is %d bytes, over the gateway's %d", len(msg.GetLogs().GetLines()), size, limit)
			}
			lines += len(msg.GetLogs().GetLines())
		}
	}
	if lines != 40 {
		t.Errorf("%d lines sent, want 40", lines)
	}
	shutdown(t, r, fs)
}
