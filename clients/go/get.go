package taskyard

import (
	"context"

	taskyardv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/v1"
)

// Get returns the task with this id; an unknown id is an *Error with
// NOT_FOUND and reason TASK_NOT_FOUND ([ErrTaskNotFound]).
func (c *Client) Get(ctx context.Context, id string) (*Task, error) {
	ctx, cancel := c.callContext(ctx, 0)
	defer cancel()
	resp, err := c.tasks.GetTask(ctx, &taskyardv1.GetTaskRequest{Id: id})
	if err != nil {
		return nil, callError(err)
	}
	return taskFromProto(resp.GetTask()), nil
}
