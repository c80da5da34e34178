package taskyard

import (
	"context"
	"time"

	taskyardv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// MaxWaitCall is the longest wait the gateway holds one call for; Wait
// splits longer waits into several calls.
const MaxWaitCall = 300 * time.Second

// deadlineMargin is how close to ctx's deadline Wait stops calling again. The
// gateway answers a wait about 100 ms before the caller's deadline, and at
// once when less is left, so another call that close would only spin.
const deadlineMargin = 150 * time.Millisecond

// Wait returns the task once it is final, or as it is when timeout has
// passed, with timedOut set: a timed-out wait is not an error. A timeout of
// zero or less waits until the task is final or ctx ends.
//
// A task that ended FAILURE or CANCELLED is an outcome, not an error: check
// task.State. The error is for the call itself (ctx's deadline, an unknown
// id, ...).
func (c *Client) Wait(ctx context.Context, id string, timeout time.Duration) (task *Task, timedOut bool, err error) {
	var end time.Time
	if timeout > 0 {
		end = time.Now().Add(timeout)
	}
	for {
		chunk := MaxWaitCall
		if !end.IsZero() {
			chunk = min(time.Until(end), MaxWaitCall)
		}
		// A wait still owed after a timed-out call needs at least a millisecond:
		// the gateway treats an unset timeout as its default, not as zero.
		chunk = max(chunk, time.Millisecond)
		resp, err := c.waitOnce(ctx, id, chunk)
		if err != nil {
			return nil, false, err
		}
		task := taskFromProto(resp.GetTask())
		if !resp.GetTimedOut() {
			return task, false, nil
		}
		if !end.IsZero() && !time.Now().Before(end) {
			return task, true, nil
		}
		if dl, ok := ctx.Deadline(); ok && !task.Final() && time.Until(dl) < deadlineMargin {
			return nil, false, callError(status.FromContextError(context.DeadlineExceeded).Err())
		}
	}
}

func (c *Client) waitOnce(ctx context.Context, id string, d time.Duration) (*taskyardv1.WaitTaskResponse, error) {
	ctx, cancel := c.callContext(ctx, d)
	defer cancel()
	resp, err := c.tasks.WaitTask(ctx, &taskyardv1.WaitTaskRequest{Id: id, Timeout: durationpb.New(d)})
	return resp, callError(err)
}
