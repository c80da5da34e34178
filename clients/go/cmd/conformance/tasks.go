package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"reflect"
	"strings"
	"time"

	taskyard "github.com/taskyard/taskyard/clients/go"
)

func submitAndWait(ctx context.Context, e *env) error {
	s, err := e.client.Submit(ctx, taskyard.Spec{Name: "add", Args: []any{2, 3}})
	if err != nil {
		return err
	}
	if s.ID == "" || !s.Created {
		return fmt.Errorf("submission id %q created %v, want an id and created", s.ID, s.Created)
	}
	return expectResult(ctx, e, s.ID, 5)
}

// expectResult waits (30 s) for the task and checks it succeeded with want.
func expectResult(ctx context.Context, e *env, id string, want int) error {
	task, _, err := e.client.Wait(ctx, id, 30*time.Second)
	if err != nil {
		return err
	}
	if task.State != taskyard.StateSuccess {
		return fmt.Errorf("task %s state %s, want SUCCESS", id, task.State)
	}
	var got int
	if err := task.DecodeResult(&got); err != nil || got != want {
		return fmt.Errorf("task %s result %v, want %d", id, task.Result, want)
	}
	return nil
}

func submitOptions(ctx context.Context, e *env) error {
	s, err := e.client.Submit(ctx, taskyard.Spec{
		Name:       "echo",
		Args:       []any{"x"},
		Priority:   taskyard.PriorityHigh,
		Queue:      "default",
		Labels:     map[string]string{"suite": "conformance"},
		MaxRetries: new(0),
		Timeout:    30 * time.Second,
	})
	if err != nil {
		return err
	}
	t, err := e.client.Get(ctx, s.ID)
	if err != nil {
		return err
	}
	switch {
	case t.Name != "echo":
		return fmt.Errorf("name %q", t.Name)
	case t.Priority != taskyard.PriorityHigh:
		return fmt.Errorf("priority %s", t.Priority)
	case t.Queue != "default":
		return fmt.Errorf("queue %q", t.Queue)
	case t.Labels["suite"] != "conformance":
		return fmt.Errorf("labels %v", t.Labels)
	case t.MaxRetries != 0:
		return fmt.Errorf("max_retries %d", t.MaxRetries)
	case t.Timeout != 30*time.Second:
		return fmt.Errorf("timeout %v", t.Timeout)
	}
	return nil
}

func batch(ctx context.Context, e *env) error {
	specs := make([]taskyard.Spec, 5)
	for i := range specs {
		specs[i] = taskyard.Spec{Name: "add", Args: []any{i, i}}
	}
	accepted, err := e.client.SubmitBatch(ctx, specs)
	if err != nil {
		return err
	}
	if len(accepted) != 5 {
		return fmt.Errorf("%d replies, want 5", len(accepted))
	}
	seen := map[string]bool{}
	for i, a := range accepted {
		if a.ID == "" || seen[a.ID] || !a.Created {
			return fmt.Errorf("reply %d: id %q created %v (duplicate or not created)", i, a.ID, a.Created)
		}
		seen[a.ID] = true
	}
	for i, a := range accepted {
		if err := expectResult(ctx, e, a.ID, 2*i); err != nil {
			return err
		}
	}
	return nil
}

func get(ctx context.Context, e *env) error {
	s, err := e.client.Submit(ctx, taskyard.Spec{Name: "add", Args: []any{2, 3}})
	if err != nil {
		return err
	}
	t, err := e.client.Get(ctx, s.ID)
	if err != nil {
		return err
	}
	if t.ID != s.ID || t.Name != "add" || !reflect.DeepEqual(t.Args, []any{2.0, 3.0}) {
		return fmt.Errorf("got id %q name %q args %v, want %q add [2 3]", t.ID, t.Name, t.Args, s.ID)
	}
	return nil
}

func waitTimeout(ctx context.Context, e *env) error {
	s, err := e.client.Submit(ctx, taskyard.Spec{Name: "sleep", Args: []any{30}})
	if err != nil {
		return err
	}
	defer e.cleanup(s.ID)
	t, timedOut, err := e.client.Wait(ctx, s.ID, 300*time.Millisecond)
	if err != nil {
		return fmt.Errorf("a timed-out wait is not an error: %w", err)
	}
	if t.Final() || !timedOut {
		return fmt.Errorf("state %s timed out %v, want not final and timed out", t.State, timedOut)
	}
	return nil
}

func listPages(ctx context.Context, e *env) error {
	marker := "conformance-" + rand.Text()
	want := map[string]bool{}
	for range 5 {
		s, err := e.client.Submit(ctx, taskyard.Spec{Name: "echo", Args: []any{marker}})
		if err != nil {
			return err
		}
		want[s.ID] = true
	}
	for id := range want {
		t, _, err := e.client.Wait(ctx, id, 30*time.Second)
		if err != nil {
			return err
		}
		if t.State != taskyard.StateSuccess {
			return fmt.Errorf("task %s state %s, want SUCCESS", id, t.State)
		}
	}
	filter := taskyard.ListOptions{Name: "echo", States: []taskyard.State{taskyard.StateSuccess}, PageSize: 2}
	page, err := e.client.List(ctx, filter)
	if err != nil {
		return err
	}
	if len(page.Tasks) != 2 || page.NextPageToken == "" {
		return fmt.Errorf("first page: %d tasks, next token %q; want 2 and a token", len(page.Tasks), page.NextPageToken)
	}
	seen := map[string]bool{}
	found := 0
	for t, err := range e.client.Tasks(ctx, filter) {
		if err != nil {
			return err
		}
		if seen[t.ID] {
			return fmt.Errorf("id %s yielded twice", t.ID)
		}
		seen[t.ID] = true
		if want[t.ID] {
			found++
		}
		// Newest first: past this run's five, the rest is earlier runs' echoes.
		if found == len(want) {
			return nil
		}
	}
	return fmt.Errorf("the iteration yielded %d of the 5 ids", found)
}

func cancelQueued(ctx context.Context, e *env) error {
	s, err := e.client.Submit(ctx, taskyard.Spec{Name: "add", Args: []any{1, 1}, Countdown: time.Hour})
	if err != nil {
		return err
	}
	if s.State != taskyard.StateScheduled {
		return fmt.Errorf("state %s, want SCHEDULED", s.State)
	}
	out, err := e.client.Cancel(ctx, s.ID, taskyard.CancelOptions{Reason: "conformance"})
	if err != nil {
		return err
	}
	if !out.Cancelled || out.Task.State != taskyard.StateCancelled {
		return fmt.Errorf("cancelled %v state %s, want true CANCELLED", out.Cancelled, out.Task.State)
	}
	t, err := e.client.Get(ctx, s.ID)
	if err != nil {
		return err
	}
	if t.State != taskyard.StateCancelled {
		return fmt.Errorf("get: state %s, want CANCELLED", t.State)
	}
	return nil
}

func cancelRunning(ctx context.Context, e *env) error {
	s, err := e.client.Submit(ctx, taskyard.Spec{Name: "sleep", Args: []any{30}})
	if err != nil {
		return err
	}
	defer e.cleanup(s.ID)
	state := s.State
	for deadline := time.Now().Add(15 * time.Second); state != taskyard.StateRunning; {
		if time.Now().After(deadline) {
			return fmt.Errorf("not RUNNING after 15 s (state %s)", state)
		}
		time.Sleep(50 * time.Millisecond)
		t, err := e.client.Get(ctx, s.ID)
		if err != nil {
			return err
		}
		state = t.State
	}
	out, err := e.client.Cancel(ctx, s.ID, taskyard.CancelOptions{Reason: "conformance", Wait: 15 * time.Second})
	if err != nil {
		return err
	}
	if !out.Cancelled || out.Task.State != taskyard.StateCancelled {
		return fmt.Errorf("cancelled %v state %s step %s, want true CANCELLED", out.Cancelled, out.Task.State, out.Step)
	}
	return nil
}

func idempotentResubmit(ctx context.Context, e *env) error {
	requestID := newUUID()
	spec := taskyard.Spec{Name: "add", Args: []any{4, 4}, RequestID: requestID}
	first, err := e.client.Submit(ctx, spec)
	if err != nil {
		return err
	}
	second, err := e.client.Submit(ctx, spec)
	if err != nil {
		return err
	}
	if first.ID != second.ID || !first.Created || second.Created {
		return fmt.Errorf("ids %s, %s created %v, %v; want one id, true then false", first.ID, second.ID, first.Created, second.Created)
	}
	s, err := e.client.Submit(ctx, taskyard.Spec{Name: "add", Args: []any{5, 5}})
	if err != nil {
		return err
	}
	t, err := e.client.Get(ctx, s.ID)
	if err != nil {
		return err
	}
	if t.RequestID == "" {
		return fmt.Errorf("the client sent no request id")
	}
	return nil
}

func taskFailure(ctx context.Context, e *env) error {
	s, err := e.client.Submit(ctx, taskyard.Spec{Name: "fail", Args: []any{"boom-conformance"}, MaxRetries: new(0)})
	if err != nil {
		return err
	}
	t, _, err := e.client.Wait(ctx, s.ID, 30*time.Second)
	if err != nil {
		return fmt.Errorf("a failed task is not an error of the call: %w", err)
	}
	if t.State != taskyard.StateFailure || t.Failure == nil || !strings.Contains(t.Failure.Message, "boom-conformance") {
		return fmt.Errorf("state %s failure %+v, want FAILURE with boom-conformance", t.State, t.Failure)
	}
	return nil
}

func runTask(ctx context.Context, e *env) error {
	run, timedOut, err := e.client.Run(ctx, taskyard.Spec{Name: "add", Args: []any{2, 3}}, 30*time.Second)
	if err != nil {
		return err
	}
	if run.ID == "" || !run.Created || timedOut {
		return fmt.Errorf("run id %q created %v timed out %v, want an id, created, not timed out", run.ID, run.Created, timedOut)
	}
	var got int
	if run.State != taskyard.StateSuccess || run.DecodeResult(&got) != nil || got != 5 {
		return fmt.Errorf("run state %s result %v, want SUCCESS and 5", run.State, run.Result)
	}
	slow, timedOut, err := e.client.Run(ctx, taskyard.Spec{Name: "sleep", Args: []any{30}}, 300*time.Millisecond)
	if err != nil {
		return fmt.Errorf("a timed-out run is not an error: %w", err)
	}
	defer e.cleanup(slow.ID)
	if slow.ID == "" || slow.Final() || !timedOut {
		return fmt.Errorf("run id %q state %s timed out %v, want an id, not final, timed out", slow.ID, slow.State, timedOut)
	}
	return nil
}
