package taskyard

import (
	"context"
	"time"

	taskyardv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/v1"
	"google.golang.org/protobuf/types/known/durationpb"
)

// CancelOptions tune Cancel; the zero value cancels at once with no reason.
type CancelOptions struct {
	Reason string
	// For a task already handed to a pool (ASSIGNED or RUNNING): how long to wait
	// for it to stop, so the outcome can say how it stopped. Zero: return once
	// its cancel flag is set.
	Wait time.Duration
}

// A Cancellation is the outcome of Cancel.
type Cancellation struct {
	Task *Task
	// True when the task is CANCELLED (at once, or by the end of the wait);
	// false when a task already handed to a pool (ASSIGNED or RUNNING) only
	// has its cancel flag set so far.
	Cancelled bool
	Step      CancelStep // how it was stopped, once it is
	// Unfinished children cancelled with it.
	CancelledChildren []string
}

// Cancel cancels a task and its unfinished children. A task no pool holds
// is CANCELLED at once. A task already handed to a pool (ASSIGNED or RUNNING)
// gets the cancel flag: its pool never starts a body whose cancel came first,
// and stops a running one in steps. A task already final is an *Error with FAILED_PRECONDITION and
// reason TASK_ALREADY_FINAL ([ErrTaskAlreadyFinal]).
func (c *Client) Cancel(ctx context.Context, id string, opts CancelOptions) (*Cancellation, error) {
	req := &taskyardv1.CancelTaskRequest{Id: id, Reason: opts.Reason}
	if opts.Wait > 0 {
		req.Wait = durationpb.New(opts.Wait)
	}
	ctx, cancel := c.callContext(ctx, opts.Wait)
	defer cancel()
	resp, err := c.tasks.CancelTask(ctx, req)
	if err != nil {
		return nil, callError(err)
	}
	return &Cancellation{
		Task:              taskFromProto(resp.GetTask()),
		Cancelled:         resp.GetCancelled(),
		Step:              CancelStep(resp.GetStep()),
		CancelledChildren: resp.GetCancelledChildren(),
	}, nil
}
