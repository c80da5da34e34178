package taskyard

import (
	"time"

	taskyardv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/v1"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// A Task as the gateway stores it. Times are zero when unset.
type Task struct {
	ID       string
	Name     string
	Args     []any
	Kwargs   map[string]any
	Priority Priority
	Queue    string
	// Per-attempt limit; zero: the task's declared one, else the deployment's.
	Timeout time.Duration
	// Retries after the first attempt; -1: the task's declared budget.
	MaxRetries      int
	RequestID       string
	IdempotencyKey  string
	ParentID        string
	RootID          string
	DependsOn       []string
	Labels          map[string]string
	State           State
	Attempt         int
	Result          any
	Failure         *Failure
	Failures        []Failure // every failed attempt, oldest first (Get only)
	WorkerID        string
	CancelRequested bool
	CancelReason    string
	CancelStep      CancelStep
	ScheduleID      string
	// The tenant it belongs to: the submitting token's ("" is the default
	// tenant). An operator listing across tenants tells them apart by it.
	Tenant string
	// As submitted (Spec.Limits), with the limits its task name declares.
	Limits      []LimitUse
	FairnessKey string
	// Set while it is a dead letter (FAILURE for good: [Client.Failures]).
	DeadLetterReason DeadLetterReason
	// The redrive that re-queued it last, if any, and the failed attempt it
	// took it from.
	RedriveID           string
	RedrivenFromAttempt int
	Context             map[string]any
	// Payload fields left out of this view, each with why.
	Omitted    map[string]string
	CreatedAt  time.Time
	StartedAt  time.Time
	FinishedAt time.Time
	UpdatedAt  time.Time
	RunAt      time.Time // when a SCHEDULED or RETRYING task becomes due

	result *structpb.Value
}

// Final reports whether the task has ended (SUCCESS, FAILURE or CANCELLED).
func (t *Task) Final() bool { return t.State.Final() }

// DecodeResult unmarshals the result into out as json.Unmarshal would, for
// a typed result instead of Result's float64, []any and map[string]any:
//
//	var sum int
//	err := task.DecodeResult(&sum)
func (t *Task) DecodeResult(out any) error { return decodeValue(t.result, out) }

// A Failure is why an attempt failed.
type Failure struct {
	Type      string // exception type, e.g. "ValueError"
	Message   string
	Traceback string
	Attempt   int
	FailedAt  time.Time
	RetryAt   time.Time // when the next attempt is due; zero after the last
	// Its failure group (FailureGroup.GroupID), and the redrive that
	// re-queued the task from it, if one did.
	GroupID   string
	RedriveID string
	// The attempt ended with a throttling answer (RetryAfter, HTTP 429/503):
	// it spent no retry. RetryAfter is the delay that answer asked for: the
	// next attempt is not due before it.
	Throttled  bool
	RetryAfter time.Duration
	// The attempt was charged to the task's retries and refunded later: its
	// circuit breaker counted the failure as an outage's.
	Refunded bool
}

func taskFromProto(p *taskyardv1.Task) *Task {
	if p == nil {
		return nil
	}
	t := &Task{
		ID:                  p.GetId(),
		Name:                p.GetName(),
		Args:                fromList(p.GetArgs()),
		Kwargs:              fromStruct(p.GetKwargs()),
		Priority:            Priority(p.GetPriority()),
		Queue:               p.GetQueue(),
		Timeout:             duration(p.GetTimeout()),
		MaxRetries:          int(p.GetMaxRetries()),
		RequestID:           p.GetRequestId(),
		IdempotencyKey:      p.GetIdempotencyKey(),
		ParentID:            p.GetParentId(),
		RootID:              p.GetRootId(),
		DependsOn:           p.GetDependsOn(),
		Labels:              p.GetLabels(),
		State:               State(p.GetState()),
		Attempt:             int(p.GetAttempt()),
		Result:              fromValue(p.GetResult()),
		Failure:             failureFromProto(p.GetFailure()),
		WorkerID:            p.GetWorkerId(),
		CancelRequested:     p.GetCancelRequested(),
		CancelReason:        p.GetCancelReason(),
		CancelStep:          CancelStep(p.GetCancelStep()),
		ScheduleID:          p.GetScheduleId(),
		Tenant:              p.GetTenant(),
		Limits:              usesFromProto(p.GetLimits()),
		FairnessKey:         p.GetFairnessKey(),
		DeadLetterReason:    DeadLetterReason(p.GetDeadLetterReason()),
		RedriveID:           p.GetRedriveId(),
		RedrivenFromAttempt: int(p.GetRedrivenFromAttempt()),
		Context:             fromStruct(p.GetContext()),
		Omitted:             p.GetOmitted(),
		CreatedAt:           timestamp(p.GetCreatedAt()),
		StartedAt:           timestamp(p.GetStartedAt()),
		FinishedAt:          timestamp(p.GetFinishedAt()),
		UpdatedAt:           timestamp(p.GetUpdatedAt()),
		RunAt:               timestamp(p.GetRunAt()),
		result:              p.GetResult(),
	}
	for _, f := range p.GetFailures() {
		t.Failures = append(t.Failures, *failureFromProto(f))
	}
	return t
}

func failureFromProto(p *taskyardv1.TaskFailure) *Failure {
	if p == nil {
		return nil
	}
	return &Failure{
		Type:       p.GetType(),
		Message:    p.GetMessage(),
		Traceback:  p.GetTraceback(),
		Attempt:    int(p.GetAttempt()),
		FailedAt:   timestamp(p.GetFailedAt()),
		RetryAt:    timestamp(p.GetRetryAt()),
		GroupID:    p.GetGroupId(),
		RedriveID:  p.GetRedriveId(),
		Throttled:  p.GetThrottled(),
		RetryAfter: duration(p.GetRetryAfter()),
		Refunded:   p.GetRefunded(),
	}
}

func timestamp(ts *timestamppb.Timestamp) time.Time {
	if ts == nil {
		return time.Time{}
	}
	return ts.AsTime()
}

func duration(d *durationpb.Duration) time.Duration {
	if d == nil {
		return 0
	}
	return d.AsDuration()
}
