package taskyard

import (
	"context"
	"crypto/rand"
	"fmt"
	"math"
	"time"

	taskyardv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/v1"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// MaxBatch is the most specs one SubmitBatch takes.
const MaxBatch = 1000

// A Spec is a task to run. Only Name is required.
type Spec struct {
	Name   string         // a task registered on a worker pool, e.g. "add"
	Args   []any          // positional arguments, JSON values
	Kwargs map[string]any // keyword arguments, JSON values

	Priority Priority
	Queue    string // empty: "default"
	Labels   map[string]string
	// Retries after the first attempt; nil: the task's declared budget, else
	// the deployment's. Go 1.26: MaxRetries: new(0).
	MaxRetries *int
	Timeout    time.Duration // per attempt; zero: the task's declared one

	// Run no earlier than Countdown after acceptance, or than ETA; at most one.
	Countdown time.Duration
	ETA       time.Time

	// Idempotency for ever: a repeat with the same RequestID returns the first
	// task. Empty: Submit makes a random one, so its own retries are safe.
	RequestID string
	// Idempotency within IdempotencyWindow (zero: 24 h) of the first submission.
	IdempotencyKey    string
	IdempotencyWindow time.Duration

	DependsOn []string // ids that must all succeed before this task is queued
	ParentID  string

	// Flow control (docs/flow-control.md): the limits an attempt takes units
	// of when the scheduler admits it (at most 8, each limit once), and the
	// fairness key it shares its lane by, e.g. a tenant (at most 256 bytes).
	Limits      []LimitUse
	FairnessKey string
}

// A Submission is the task Submit accepted.
type Submission struct {
	*Task
	// False when the request id matched an earlier submission, whose task
	// this is.
	Created bool
}

// Accepted is the outcome of one spec of a batch.
type Accepted struct {
	ID      string
	State   State
	Created bool
}

// Submit accepts one task; it returns once the task is stored.
func (c *Client) Submit(ctx context.Context, spec Spec) (*Submission, error) {
	p, err := spec.proto("task")
	if err != nil {
		return nil, err
	}
	ctx, cancel := c.callContext(ctx, 0)
	defer cancel()
	resp, err := c.tasks.SubmitTask(ctx, &taskyardv1.SubmitTaskRequest{Task: p})
	if err != nil {
		return nil, callError(err)
	}
	return &Submission{Task: taskFromProto(resp.GetTask()), Created: resp.GetCreated()}, nil
}

// SubmitBatch accepts up to [MaxBatch] tasks in one call, all or none. The
// outcomes come back in the order of specs.
func (c *Client) SubmitBatch(ctx context.Context, specs []Spec) ([]Accepted, error) {
	if len(specs) > MaxBatch {
		return nil, errorf("tasks", "%d specs, at most %d in one batch", len(specs), MaxBatch)
	}
	req := &taskyardv1.BatchSubmitTasksRequest{Tasks: make([]*taskyardv1.TaskSpec, len(specs))}
	for i, spec := range specs {
		p, err := spec.proto(fmt.Sprintf("tasks[%d]", i))
		if err != nil {
			return nil, err
		}
		req.Tasks[i] = p
	}
	ctx, cancel := c.callContext(ctx, 0)
	defer cancel()
	resp, err := c.tasks.BatchSubmitTasks(ctx, req)
	if err != nil {
		return nil, callError(err)
	}
	out := make([]Accepted, len(resp.GetTasks()))
	for i, t := range resp.GetTasks() {
		out[i] = Accepted{ID: t.GetId(), State: State(t.GetState()), Created: t.GetCreated()}
	}
	return out, nil
}

// proto converts the spec; path names it in errors ("task", "tasks[3]").
func (s Spec) proto(path string) (*taskyardv1.TaskSpec, error) {
	p := &taskyardv1.TaskSpec{
		Name:           s.Name,
		Priority:       taskyardv1.Priority(s.Priority),
		Queue:          s.Queue,
		Labels:         s.Labels,
		RequestId:      s.RequestID,
		IdempotencyKey: s.IdempotencyKey,
		DependsOn:      s.DependsOn,
		ParentId:       s.ParentID,
		Limits:         usesToProto(s.Limits),
		FairnessKey:    s.FairnessKey,
	}
	if p.RequestId == "" {
		p.RequestId = newRequestID()
	}
	if s.Args != nil {
		args, err := toList(s.Args, path+".args")
		if err != nil {
			return nil, err
		}
		p.Args = args
	}
	if s.Kwargs != nil {
		kwargs, err := toStruct(s.Kwargs, path+".kwargs")
		if err != nil {
			return nil, err
		}
		p.Kwargs = kwargs
	}
	if s.MaxRetries != nil {
		if *s.MaxRetries < 0 || *s.MaxRetries > math.MaxInt32 {
			return nil, errorf(path+".max_retries", "%d is out of range", *s.MaxRetries)
		}
		n := int32(*s.MaxRetries)
		p.MaxRetries = &n
	}
	if s.Timeout != 0 {
		p.Timeout = durationpb.New(s.Timeout)
	}
	if s.Countdown != 0 {
		p.Countdown = durationpb.New(s.Countdown)
	}
	if !s.ETA.IsZero() {
		p.Eta = timestamppb.New(s.ETA)
	}
	if s.IdempotencyWindow != 0 {
		p.IdempotencyWindow = durationpb.New(s.IdempotencyWindow)
	}
	return p, nil
}

// newRequestID is a random (version 4) UUID.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
