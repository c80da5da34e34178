package taskyard

import (
	"strings"

	taskyardv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/v1"
)

// State is where a task is in its life.
type State int32

const (
	StateUnspecified State = State(taskyardv1.TaskState_TASK_STATE_UNSPECIFIED)
	StatePending     State = State(taskyardv1.TaskState_TASK_STATE_PENDING)   // waiting on dependencies
	StateQueued      State = State(taskyardv1.TaskState_TASK_STATE_QUEUED)    // ready, in its priority lane
	StateScheduled   State = State(taskyardv1.TaskState_TASK_STATE_SCHEDULED) // waiting for its ETA
	StateAssigned    State = State(taskyardv1.TaskState_TASK_STATE_ASSIGNED)  // leased to a pool, not started
	StateRunning     State = State(taskyardv1.TaskState_TASK_STATE_RUNNING)
	StateSuccess     State = State(taskyardv1.TaskState_TASK_STATE_SUCCESS)
	StateFailure     State = State(taskyardv1.TaskState_TASK_STATE_FAILURE)
	StateRetrying    State = State(taskyardv1.TaskState_TASK_STATE_RETRYING) // waiting for its backoff
	StateCancelled   State = State(taskyardv1.TaskState_TASK_STATE_CANCELLED)
)

// Final reports whether s is SUCCESS, FAILURE or CANCELLED.
func (s State) Final() bool {
	return s == StateSuccess || s == StateFailure || s == StateCancelled
}

// String is the state's name, e.g. "SUCCESS".
func (s State) String() string {
	return enumName(taskyardv1.TaskState(s).String(), "TASK_STATE_")
}

// Priority is a task's lane; a higher lane never waits behind a lower one.
type Priority int32

const (
	PriorityUnspecified Priority = Priority(taskyardv1.Priority_PRIORITY_UNSPECIFIED) // treated as normal
	PriorityCritical    Priority = Priority(taskyardv1.Priority_PRIORITY_CRITICAL)
	PriorityHigh        Priority = Priority(taskyardv1.Priority_PRIORITY_HIGH)
	PriorityNormal      Priority = Priority(taskyardv1.Priority_PRIORITY_NORMAL)
	PriorityLow         Priority = Priority(taskyardv1.Priority_PRIORITY_LOW)
)

// String is the priority's name, e.g. "HIGH".
func (p Priority) String() string {
	return enumName(taskyardv1.Priority(p).String(), "PRIORITY_")
}

// CancelStep is how a cancellation took effect.
type CancelStep int32

const (
	CancelStepUnspecified CancelStep = CancelStep(taskyardv1.CancelStep_CANCEL_STEP_UNSPECIFIED)
	CancelStepNotStarted  CancelStep = CancelStep(taskyardv1.CancelStep_CANCEL_STEP_NOT_STARTED) // cancelled before it ran
	CancelStepFlag        CancelStep = CancelStep(taskyardv1.CancelStep_CANCEL_STEP_FLAG)        // the task saw its flag
	CancelStepAsyncio     CancelStep = CancelStep(taskyardv1.CancelStep_CANCEL_STEP_ASYNCIO)     // cancellation stopped it
	CancelStepKill        CancelStep = CancelStep(taskyardv1.CancelStep_CANCEL_STEP_KILL)        // its worker was killed
)

// String is the step's name, e.g. "NOT_STARTED".
func (c CancelStep) String() string {
	return enumName(taskyardv1.CancelStep(c).String(), "CANCEL_STEP_")
}

// enumName strips the proto prefix; a number the generated code does not
// know (a newer gateway) stays a number.
func enumName(name, prefix string) string {
	return strings.TrimPrefix(name, prefix)
}
