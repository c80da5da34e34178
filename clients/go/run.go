package taskyard

import (
	"context"
	"time"

	taskyardv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/v1"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Run submits one task and waits for its final state in one call (RunTask).
// It returns the task once final, or as it is when timeout has passed, with
// timedOut set: a timed-out run is not an error, the task goes on (Wait on
// run.ID later). A timeout of zero or less waits until the task is final or
// ctx ends; one longer than MaxWaitCall goes on as Wait does. Like Submit it
// is exactly-once per RequestID: a repeat waits on the first submission's
// task (Created false).
//
// A task that ended FAILURE or CANCELLED is an outcome, not an error: check
// run.State. The error is for the call itself (bad input, ctx's deadline
// before the timeout, ...), as Submit's and Wait's.
func (c *Client) Run(ctx context.Context, spec Spec, timeout time.Duration) (run *Submission, timedOut bool, err error) {
	p, err := spec.proto("task")
	if err != nil {
		return nil, false, err
	}
	started := time.Now()
	chunk := MaxWaitCall
	if timeout > 0 {
		chunk = min(timeout, MaxWaitCall)
	}
	callCtx, cancel := c.callContext(ctx, chunk)
	defer cancel()
	resp, err := c.tasks.RunTask(callCtx, &taskyardv1.RunTaskRequest{Task: p, Timeout: durationpb.New(chunk)})
	if err != nil {
		return nil, false, callError(err)
	}
	run = &Submission{Task: taskFromProto(resp.GetTask()), Created: resp.GetCreated()}
	if resp.GetFinal() {
		return run, false, nil
	}
	var rest time.Duration // zero: until final, as Wait's
	if timeout > 0 {
		if rest = timeout - time.Since(started); rest <= 0 {
			return run, true, nil
		}
	}
	// The call ended early (ctx's deadline, a gateway stopping) or the wait is
	// longer than one call: the rest as Wait waits.
	task, timedOut, err := c.Wait(ctx, run.ID, rest)
	if err != nil {
		return nil, false, err
	}
	return &Submission{Task: task, Created: run.Created}, timedOut, nil
}
