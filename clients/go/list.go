package taskyard

import (
	"context"
	"fmt"
	"iter"

	taskyardv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/v1"
)

// ListOptions filter a listing; the zero value lists every task.
type ListOptions struct {
	States   []State // any of these; empty: all
	Name     string
	Queue    string
	Priority Priority
	PageSize int // 1..1000; zero: 100
	// Where to start: a previous Page's NextPageToken; empty: the first page.
	PageToken string
}

// MaxPageSize is the largest page the gateway serves.
const MaxPageSize = 1000

// A Page is one page of a listing, newest task first.
type Page struct {
	Tasks []*Task
	// Pass it as ListOptions.PageToken for the next page; empty on the last.
	NextPageToken string
}

// List returns one page of the tasks that match opts.
func (c *Client) List(ctx context.Context, opts ListOptions) (*Page, error) {
	if opts.PageSize < 0 || opts.PageSize > MaxPageSize {
		return nil, errorf("page_size", "must be 0..%d, not %d", MaxPageSize, opts.PageSize)
	}
	req := &taskyardv1.ListTasksRequest{
		Name:      opts.Name,
		Queue:     opts.Queue,
		Priority:  taskyardv1.Priority(opts.Priority),
		PageSize:  int32(opts.PageSize),
		PageToken: opts.PageToken,
	}
	for _, s := range opts.States {
		req.States = append(req.States, taskyardv1.TaskState(s))
	}
	ctx, cancel := c.callContext(ctx, 0)
	defer cancel()
	resp, err := c.tasks.ListTasks(ctx, req)
	if err != nil {
		return nil, callError(err)
	}
	page := &Page{Tasks: make([]*Task, len(resp.GetTasks())), NextPageToken: resp.GetNextPageToken()}
	for i, t := range resp.GetTasks() {
		page.Tasks[i] = taskFromProto(t)
	}
	return page, nil
}

// Tasks iterates over every task that matches opts, fetching pages of
// opts.PageSize as the loop needs them. A failed page ends the iteration
// with its error, and so does a page pointing back at itself (the same
// next page token as the one sent), which would otherwise loop for ever:
//
//	for task, err := range c.Tasks(ctx, taskyard.ListOptions{Name: "add"}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(task.ID, task.State)
//	}
func (c *Client) Tasks(ctx context.Context, opts ListOptions) iter.Seq2[*Task, error] {
	return pages(opts.PageToken, func(token string) ([]*Task, string, error) {
		opts.PageToken = token
		page, err := c.List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		return page.Tasks, page.NextPageToken, nil
	})
}

// pages iterates over the items of the pages fetch returns, from token on.
// A failed page ends the iteration with its error, and so does a page
// pointing back at itself (a next page token equal to the one sent).
func pages[T any](token string, fetch func(token string) ([]T, string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		for {
			items, next, err := fetch(token)
			if err != nil {
				yield(zero, err)
				return
			}
			for _, item := range items {
				if !yield(item, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			if next == token {
				yield(zero, fmt.Errorf("taskyard: the gateway answered page token %q with itself", token))
				return
			}
			token = next
		}
	}
}
