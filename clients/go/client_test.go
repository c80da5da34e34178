package taskyard

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	taskyardv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/v1"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/structpb"
)

// fakeTasks records what reaches the server; its first failSubmits
// SubmitTask calls answer UNAVAILABLE.
type fakeTasks struct {
	taskyardv1.UnimplementedTaskServiceServer
	mu          sync.Mutex
	failSubmits int
	failCancels int
	cancels     int
	requestIDs  []string
	md          []metadata.MD
	waits       []time.Duration
	runs        []*taskyardv1.RunTaskRequest
}

func (f *fakeTasks) SubmitTask(ctx context.Context, req *taskyardv1.SubmitTaskRequest) (*taskyardv1.SubmitTaskResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	md, _ := metadata.FromIncomingContext(ctx)
	f.md = append(f.md, md)
	f.requestIDs = append(f.requestIDs, req.GetTask().GetRequestId())
	if f.failSubmits > 0 {
		f.failSubmits--
		return nil, status.Error(codes.Unavailable, "restarting")
	}
	return &taskyardv1.SubmitTaskResponse{Task: &taskyardv1.Task{Id: "t1", Name: req.GetTask().GetName(), RequestId: req.GetTask().GetRequestId()}, Created: true}, nil
}

// WaitTask holds the call as the gateway does: for the wait asked, but no
// later than 100 ms before the caller's deadline.
func (f *fakeTasks) WaitTask(ctx context.Context, req *taskyardv1.WaitTaskRequest) (*taskyardv1.WaitTaskResponse, error) {
	hold := req.GetTimeout().AsDuration()
	if dl, ok := ctx.Deadline(); ok {
		hold = max(0, min(hold, time.Until(dl)-100*time.Millisecond))
	}
	time.Sleep(hold)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.waits = append(f.waits, req.GetTimeout().AsDuration())
	return &taskyardv1.WaitTaskResponse{Task: &taskyardv1.Task{Id: req.GetId(), State: taskyardv1.TaskState_TASK_STATE_RUNNING}, TimedOut: true}, nil
}

// RunTask answers "add" final at once (SUCCESS, 5); any other task it holds as
// WaitTask does and answers not final.
func (f *fakeTasks) RunTask(ctx context.Context, req *taskyardv1.RunTaskRequest) (*taskyardv1.RunTaskResponse, error) {
	f.mu.Lock()
	f.requestIDs = append(f.requestIDs, req.GetTask().GetRequestId())
	f.runs = append(f.runs, req)
	f.mu.Unlock()
	task := &taskyardv1.Task{Id: "r1", Name: req.GetTask().GetName(), State: taskyardv1.TaskState_TASK_STATE_RUNNING}
	if req.GetTask().GetName() == "add" {
		task.State = taskyardv1.TaskState_TASK_STATE_SUCCESS
		task.Result = structpb.NewNumberValue(5)
		return &taskyardv1.RunTaskResponse{Task: task, Created: true, Final: true}, nil
	}
	hold := req.GetTimeout().AsDuration()
	if dl, ok := ctx.Deadline(); ok {
		hold = max(0, min(hold, time.Until(dl)-100*time.Millisecond))
	}
	time.Sleep(hold)
	return &taskyardv1.RunTaskResponse{Task: task, Created: true}, nil
}

func (f *fakeTasks) CancelTask(_ context.Context, req *taskyardv1.CancelTaskRequest) (*taskyardv1.CancelTaskResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancels++
	if f.failCancels > 0 {
		f.failCancels--
		return nil, status.Error(codes.Unavailable, "connection lost after commit")
	}
	return &taskyardv1.CancelTaskResponse{Task: &taskyardv1.Task{Id: req.GetId(), State: taskyardv1.TaskState_TASK_STATE_CANCELLED}, Cancelled: true}, nil
}

// ListTasks answers token "stuck" with itself, any other with "stuck".
func (f *fakeTasks) ListTasks(_ context.Context, req *taskyardv1.ListTasksRequest) (*taskyardv1.ListTasksResponse, error) {
	return &taskyardv1.ListTasksResponse{Tasks: []*taskyardv1.Task{{Id: "t-" + req.GetPageToken()}}, NextPageToken: "stuck"}, nil
}

func startFake(t *testing.T, f *fakeTasks, opts ...Option) *Client {
	t.Helper()
	return startServer(t, func(srv *grpc.Server) { taskyardv1.RegisterTaskServiceServer(srv, f) }, opts...)
}

// startServer serves what register registers in memory, and a client of it.
func startServer(t *testing.T, register func(*grpc.Server), opts ...Option) *Client {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	register(srv)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	dialer := grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) })
	c, err := New("127.0.0.1:1", append([]Option{WithInsecure(), WithDialOptions(dialer)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestSubmitSendsTokenAndTraceContext(t *testing.T) {
	f := &fakeTasks{}
	c := startFake(t, f, WithToken("tok-123"))
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:     trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8},
		TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	s, err := c.Submit(ctx, Spec{Name: "add", Args: []any{2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Created || s.ID != "t1" || s.RequestID == "" {
		t.Errorf("submission %+v", s)
	}
	md := f.md[0]
	if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer tok-123" {
		t.Errorf("authorization %v", got)
	}
	want := "00-0102030405060708090a0b0c0d0e0f10-0102030405060708-01"
	if got := md.Get("traceparent"); len(got) != 1 || got[0] != want {
		t.Errorf("traceparent %v, want %s", got, want)
	}
	if _, err := c.Submit(context.Background(), Spec{Name: "add"}); err != nil {
		t.Fatal(err)
	}
	if got := f.md[1].Get("traceparent"); len(got) != 0 {
		t.Errorf("traceparent sent without a span: %v", got)
	}
}

func TestSubmitRetriesUnavailableWithTheSameRequestID(t *testing.T) {
	f := &fakeTasks{failSubmits: 2}
	c := startFake(t, f)
	s, err := c.Submit(context.Background(), Spec{Name: "add"})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.requestIDs) != 3 {
		t.Fatalf("%d attempts, want 3", len(f.requestIDs))
	}
	for _, id := range f.requestIDs {
		if id != s.RequestID || id == "" {
			t.Fatalf("request ids %v, want all %q", f.requestIDs, s.RequestID)
		}
	}
}

func TestWaitTimesOutWithoutError(t *testing.T) {
	f := &fakeTasks{}
	c := startFake(t, f)
	task, timedOut, err := c.Wait(context.Background(), "t1", 50*time.Millisecond)
	if err != nil || !timedOut || task.State != StateRunning || task.Final() {
		t.Fatalf("Wait = %+v, %v, %v", task, timedOut, err)
	}
	if f.waits[0] <= 0 || f.waits[0] > 50*time.Millisecond {
		t.Errorf("wait timeout sent %v", f.waits[0])
	}
}

func TestRunReturnsTheFinalTask(t *testing.T) {
	f := &fakeTasks{}
	c := startFake(t, f)
	run, timedOut, err := c.Run(context.Background(), Spec{Name: "add", Args: []any{2, 3}}, 30*time.Second)
	if err != nil || timedOut || !run.Created || run.State != StateSuccess {
		t.Fatalf("Run = %+v, %v, %v", run, timedOut, err)
	}
	var got int
	if err := run.DecodeResult(&got); err != nil || got != 5 {
		t.Fatalf("result %v (%v), want 5", run.Result, err)
	}
	if req := f.runs[0]; req.GetTimeout().AsDuration() != 30*time.Second || req.GetTask().GetRequestId() == "" {
		t.Errorf("RunTask sent timeout %v, request id %q", req.GetTimeout().AsDuration(), req.GetTask().GetRequestId())
	}
}

func TestRunTimesOutWithoutError(t *testing.T) {
	f := &fakeTasks{}
	c := startFake(t, f)
	run, timedOut, err := c.Run(context.Background(), Spec{Name: "sleep", Args: []any{30}}, 50*time.Millisecond)
	if err != nil || !timedOut || run.Final() || run.ID != "r1" {
		t.Fatalf("Run = %+v, %v, %v", run, timedOut, err)
	}
	if got := f.runs[0].GetTimeout().AsDuration(); got != 50*time.Millisecond {
		t.Errorf("RunTask sent timeout %v, want 50ms", got)
	}
}

func TestBatchGivesEachSpecARequestID(t *testing.T) {
	p0, _ := Spec{Name: "a"}.proto("tasks[0]")
	p1, _ := Spec{Name: "a", RequestID: "mine"}.proto("tasks[1]")
	if p0.GetRequestId() == "" || p1.GetRequestId() != "mine" {
		t.Fatalf("request ids %q, %q", p0.GetRequestId(), p1.GetRequestId())
	}
	if id := newRequestID(); len(id) != 36 || id[14] != '4' {
		t.Fatalf("not a v4 UUID: %s", id)
	}
	zero := 0
	p, err := Spec{Name: "a", MaxRetries: &zero, Timeout: time.Second}.proto("task")
	if err != nil || p.MaxRetries == nil || *p.MaxRetries != 0 || p.GetTimeout().AsDuration() != time.Second {
		t.Fatalf("spec %v, %v", p, err)
	}
	if _, err := (&Client{}).SubmitBatch(context.Background(), make([]Spec, MaxBatch+1)); err == nil {
		t.Fatal("a batch over MaxBatch must be refused before sending")
	}
}

func TestWaitStopsAtTheCallersDeadline(t *testing.T) {
	f := &fakeTasks{}
	c := startFake(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, _, err := c.Wait(ctx, "t1", 10*time.Second)
	var terr *Error
	if !errors.As(err, &terr) || terr.Code != codes.DeadlineExceeded || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait = %v, want DEADLINE_EXCEEDED", err)
	}
	f.mu.Lock()
	calls := len(f.waits)
	f.mu.Unlock()
	// One call held until 100 ms before the deadline; a second at most if the
	// first came back late, never a burst of calls answered at once.
	if calls < 1 || calls > 2 {
		t.Errorf("%d WaitTask calls, want 1 or 2", calls)
	}
}

func TestCancelIsNotRetried(t *testing.T) {
	f := &fakeTasks{failCancels: 1}
	c := startFake(t, f)
	_, err := c.Cancel(context.Background(), "t1", CancelOptions{})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("Cancel = %v, want UNAVAILABLE", err)
	}
	if f.cancels != 1 {
		t.Fatalf("%d CancelTask attempts, want 1", f.cancels)
	}
}

func TestRetriedMethods(t *testing.T) {
	var cfg struct {
		MethodConfig []struct {
			Name []struct{ Service, Method string }
		}
	}
	if err := json.Unmarshal([]byte(serviceConfig), &cfg); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, mc := range cfg.MethodConfig {
		for _, n := range mc.Name {
			got = append(got, strings.TrimPrefix(n.Service, "taskyard.v1.")+"/"+n.Method)
		}
	}
	want := []string{
		"TaskService/SubmitTask", "TaskService/BatchSubmitTasks", "TaskService/RunTask", "TaskService/GetTask",
		"TaskService/WaitTask", "TaskService/ListTasks", "TaskService/GetTaskTree",
		"TaskService/ExplainTask", "TaskService/GetTaskLogs", "TaskService/StreamTaskLogs",
		"QueueService/GetQueueStatus", "QueueService/ListServers",
		"ScheduleService/GetSchedule", "ScheduleService/ListSchedules",
		"LimitService/GetLimit", "LimitService/ListLimits", "LimitService/ListKeyWeights",
		"FailureService/ListFailureGroups", "FailureService/ListFailures", "FailureService/GetRedrive",
		"FailureService/ListRedrives", "FailureService/ListRedriveItems",
		"TenantService/GetTenant", "TenantService/ListTenants",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("retried %v, want %v", got, want)
	}
}

func TestTasksStopsOnARepeatedPageToken(t *testing.T) {
	c := startFake(t, &fakeTasks{})
	var ids []string
	var last error
	for task, err := range c.Tasks(context.Background(), ListOptions{}) {
		if err != nil {
			last = err
			break
		}
		ids = append(ids, task.ID)
	}
	if last == nil || !slices.Equal(ids, []string{"t-", "t-stuck"}) {
		t.Fatalf("tasks %v, error %v; want two tasks then an error", ids, last)
	}
}

func TestListRefusesPageSizeOutOfRange(t *testing.T) {
	c := startFake(t, &fakeTasks{})
	for _, size := range []int{-1, MaxPageSize + 1, 1 << 40} {
		_, err := c.List(context.Background(), ListOptions{PageSize: size})
		var terr *Error
		if !errors.As(err, &terr) || terr.Code != codes.InvalidArgument {
			t.Errorf("List(PageSize %d) = %v, want INVALID_ARGUMENT", size, err)
		}
	}
}
