package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"regexp"
	"sync"
	"syscall"
	"time"

	taskyard "github.com/taskyard/taskyard/clients/go"
	workerv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/worker/v1"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Version is this library's version, sent to the gateway as "go/<Version>".
const Version = "0.1.0"

// Limits of a worker, as the gateway enforces them.
const (
	MaxSlots = 256  // attempts a worker runs at once
	MaxTasks = 1000 // functions one worker registers
)

// The reconnection backoff after the stream broke: it doubles from the first
// to the last, and starts again from the first once a stream was welcomed.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// A Func runs one attempt of a task. What it returns is the task's result
// (any JSON value, converted as encoding/json would); an error fails the
// attempt, retried unless marked with [Fatal]. ctx ends when the task is
// cancelled, its lease revoked or its deadline passed: context.Cause(ctx) is
// [ErrCancelled], [ErrRevoked], [ErrTimeout] or [ErrConnectionLost].
type Func func(ctx context.Context, t *Task) (any, error)

// Config configures a Worker; every field has a default.
type Config struct {
	// Name shown in `taskyard queue servers` and the dashboard; empty:
	// "go@<hostname>-<pid>".
	Name string
	// Slots is how many attempts run at once, 1..MaxSlots; zero: 4.
	Slots int
	// Logger receives the worker's own events (reconnections, refusals);
	// nil: slog.Default().
	Logger *slog.Logger
	// TracerProvider makes the attempts' spans; nil: otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// DrainTimeout bounds a drain: past it the bodies still running are
	// abandoned (as if the process died) and Run returns ErrDrainTimeout.
	// Zero: a drain waits for them however long they take.
	DrainTimeout time.Duration
	// WelcomeTimeout is how long a Hello waits for the gateway's Welcome
	// before the worker opens a new stream; zero: 30 s.
	WelcomeTimeout time.Duration
}

// A Worker runs registered functions for the gateway a Client talks to, over
// one stream (taskyard.worker.v1.WorkerService): to the suite it is a pool
// whose slots are Config.Slots.
type Worker struct {
	client  *taskyard.Client
	stub    workerv1.WorkerServiceClient
	name    string
	slots   int
	log     *slog.Logger
	tracer  trace.Tracer
	drainIn time.Duration
	// How long a Hello waits for its Welcome.
	welcomeIn time.Duration

	mu      sync.Mutex
	funcs   map[string]Func
	decls   []*workerv1.TaskDeclaration
	onReady []func(workerID string)
	running bool
}

// New makes a worker that connects through client: its token (which needs
// the `work` scope, and `submit` for child tasks), TLS and tracing. The
// worker does not close the client.
func New(client *taskyard.Client, cfg Config) (*Worker, error) {
	if client == nil {
		return nil, errors.New("worker: nil client")
	}
	if cfg.Slots == 0 {
		cfg.Slots = 4
	}
	if cfg.Slots < 1 || cfg.Slots > MaxSlots {
		return nil, fmt.Errorf("worker: %d slots, want 1..%d", cfg.Slots, MaxSlots)
	}
	if cfg.DrainTimeout < 0 || cfg.WelcomeTimeout < 0 {
		return nil, fmt.Errorf("worker: negative timeout (drain %v, welcome %v)", cfg.DrainTimeout, cfg.WelcomeTimeout)
	}
	if cfg.WelcomeTimeout == 0 {
		cfg.WelcomeTimeout = 30 * time.Second
	}
	if cfg.Name == "" {
		host, _ := os.Hostname()
		cfg.Name = fmt.Sprintf("go@%s-%d", host, os.Getpid())
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.TracerProvider == nil {
		cfg.TracerProvider = otel.GetTracerProvider()
	}
	return &Worker{
		client:    client,
		stub:      workerv1.NewWorkerServiceClient(client.Conn()),
		name:      cfg.Name,
		slots:     cfg.Slots,
		log:       cfg.Logger,
		tracer:    cfg.TracerProvider.Tracer("github.com/taskyard/taskyard/clients/go/worker", trace.WithInstrumentationVersion(Version)),
		drainIn:   cfg.DrainTimeout,
		welcomeIn: cfg.WelcomeTimeout,
		funcs:     map[string]Func{},
	}, nil
}

// A TaskOption declares how the suite runs a registered function, as the
// arguments of Python's @task(...) do.
type TaskOption func(*workerv1.TaskDeclaration)

// WithTimeout is the default timeout of the function's attempts (a
// submission's own wins).
func WithTimeout(d time.Duration) TaskOption {
	return func(d2 *workerv1.TaskDeclaration) { d2.Timeout = durationpb.New(d) }
}

// WithMaxRetries is the retry budget of a submission that asks for the
// task's default.
func WithMaxRetries(n int) TaskOption {
	return func(d *workerv1.TaskDeclaration) {
		m := int32(min(max(n, -1), 1<<31-1))
		d.MaxRetries = &m
	}
}

// WithRateLimit is a rate limit every task of this name takes, such as
// "100/s" or "10/m" (per key with [WithLimitKey]).
func WithRateLimit(rate string) TaskOption {
	return func(d *workerv1.TaskDeclaration) { d.RateLimit = rate }
}

// WithConcurrency is a concurrency limit every task of this name takes (per
// key with [WithLimitKey]).
func WithConcurrency(n int) TaskOption {
	return func(d *workerv1.TaskDeclaration) { d.Concurrency = int32(min(max(n, -1), 1<<31-1)) }
}

// WithLimitKey names the keyword argument whose value keys the declared
// limits: each value has limits of its own.
func WithLimitKey(kwarg string) TaskOption {
	return func(d *workerv1.TaskDeclaration) { d.LimitKey = kwarg }
}

// taskName is what a task name may be (as at submission).
var taskName = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,200}$`)

// Register adds fn under name, before Run. A name is letters, digits and
// `._:-`, 1..200 characters, registered once.
func (w *Worker) Register(name string, fn Func, opts ...TaskOption) error {
	if fn == nil {
		return fmt.Errorf("worker: nil function for %q", name)
	}
	if !taskName.MatchString(name) {
		return fmt.Errorf("worker: task name %q: want 1..200 letters, digits or ._:-", name)
	}
	decl := &workerv1.TaskDeclaration{Name: name}
	for _, opt := range opts {
		opt(decl)
	}
	switch {
	case decl.Timeout != nil && decl.Timeout.AsDuration() <= 0:
		return fmt.Errorf("worker: %s: timeout %v, want more than zero", name, decl.Timeout.AsDuration())
	case decl.MaxRetries != nil && *decl.MaxRetries < 0:
		return fmt.Errorf("worker: %s: max retries %d, want zero or more", name, *decl.MaxRetries)
	case decl.Concurrency < 0:
		return fmt.Errorf("worker: %s: concurrency %d, want zero (none) or more", name, decl.Concurrency)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.running:
		return fmt.Errorf("worker: Register(%q) after Run", name)
	case w.funcs[name] != nil:
		return fmt.Errorf("worker: %q registered twice", name)
	case len(w.funcs) >= MaxTasks:
		return fmt.Errorf("worker: more than %d functions", MaxTasks)
	}
	w.funcs[name] = fn
	w.decls = append(w.decls, decl)
	return nil
}

// OnReady calls fn with the worker id (Welcome.worker_id, the pool id the
// suite knows the worker by) each time the gateway welcomes the worker: once
// per connection, so again after a reconnection, with a new id.
func (w *Worker) OnReady(fn func(workerID string)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onReady = append(w.onReady, fn)
}

// Run connects and runs attempts until ctx ends, then drains: it tells the
// gateway to send no new attempts, lets the running ones finish and report,
// closes the stream and returns nil. A broken stream is reconnected with
// backoff (its running attempts are abandoned: the suite recovers them as a
// dead pool's). Run returns the gateway's refusal of the worker itself
// (codes Unauthenticated, PermissionDenied, InvalidArgument, Unimplemented)
// as a gRPC status error (status.Code(err) gives the code).
//
// A body that ignores its context after a revoke may still be running when
// Run returns.
func (w *Worker) Run(ctx context.Context) error {
	w.mu.Lock()
	if w.running {
		w.mu.Unlock()
		return errors.New("worker: Run called twice")
	}
	if len(w.funcs) == 0 {
		w.mu.Unlock()
		return errors.New("worker: no function registered")
	}
	w.running = true
	hello := &workerv1.Hello{WorkerName: w.name, Slots: int32(w.slots), Tasks: w.decls, Sdk: "go/" + Version}
	w.mu.Unlock()

	backoff := minBackoff
	for {
		welcomed, err := w.session(ctx, hello)
		if ctx.Err() != nil {
			if errors.Is(err, ErrDrainTimeout) {
				return err
			}
			return nil
		}
		if refusal(err) {
			return fmt.Errorf("worker: the gateway refused the worker (%s): %w", codeName(status.Code(err)), err)
		}
		if welcomed {
			backoff = minBackoff
		}
		w.log.Warn("taskyard worker: stream ended, reconnecting", "error", err, "in", backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// refusal tells the errors that reconnecting would only repeat.
func refusal(err error) bool {
	switch status.Code(err) {
	case codes.Unauthenticated, codes.PermissionDenied, codes.InvalidArgument, codes.Unimplemented:
		return true
	}
	return false
}

// codeName is a gRPC code's canonical name, as the protocol's docs write it:
// "UNAUTHENTICATED", "PERMISSION_DENIED".
func codeName(c codes.Code) string {
	var out []byte
	lower := false
	for _, r := range c.String() {
		if r >= 'A' && r <= 'Z' && lower {
			out = append(out, '_')
		}
		if lower = r >= 'a' && r <= 'z'; lower {
			r -= 'a' - 'A'
		}
		out = append(out, byte(r))
	}
	return string(out)
}

// RunUntilSignal is Run until SIGINT or SIGTERM (or ctx ends), which starts
// the drain. A second signal during the drain ends the process as the signal
// would by default.
func (w *Worker) RunUntilSignal(ctx context.Context) error {
	sigCtx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-sigCtx.Done()
		stop()
	}()
	return w.Run(sigCtx)
}
