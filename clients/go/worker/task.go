package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	taskyard "github.com/taskyard/taskyard/clients/go"
)

// A Task is the attempt a function runs: who it is, its arguments, and ways
// to report logs and progress and to submit children. It is valid while the
// function runs; what it reports after the function returned is dropped.
type Task struct {
	ID      string
	Name    string // as registered, e.g. "billing.charge"
	Attempt int    // 1 for the first run; a retry has the next number
	// Args and Kwargs are JSON values as encoding/json decodes them into an
	// any: numbers are float64 (see [Task.DecodeArg]).
	Args        []any
	Kwargs      map[string]any
	Labels      map[string]string
	Queue       string
	Priority    taskyard.Priority
	ParentID    string // empty: a root task
	RootID      string
	Tenant      string    // empty: none
	RetriesLeft int       // what this task may still spend after this attempt fails
	Deadline    time.Time // zero: no timeout; ctx ends at it (cause ErrTimeout)

	run *attempt
}

// Log adds a line to the task's log (level "info", "warning", "error", ...:
// shown as the line's type). Lines are sent in batches, at most
// [LogFlushInterval] after they were logged; a message longer than
// [MaxLogLineBytes] is cut there.
func (t *Task) Log(level, msg string) { t.run.log(level, msg) }

// Logf is Log with a message formatted as fmt.Sprintf does.
func (t *Task) Logf(level, format string, args ...any) {
	t.run.log(level, fmt.Sprintf(format, args...))
}

// Progress reports how far the attempt is, fraction from 0 to 1 (clamped):
// kept in the task's context under "progress" (GetTask) and logged as a line
// of type "progress". The lines logged before it are sent first.
func (t *Task) Progress(fraction float64, msg string) { t.run.progress(fraction, msg) }

// SubmitChild submits name(args...) as a child of this task (its parent id is
// this task's) through the worker's client, and returns the child's id. Pass
// the function's ctx, so that the child continues the attempt's trace.
func (t *Task) SubmitChild(ctx context.Context, name string, args ...any) (string, error) {
	s, err := t.SubmitChildSpec(ctx, taskyard.Spec{Name: name, Args: args})
	if err != nil {
		return "", err
	}
	return s.ID, nil
}

// SubmitChildSpec submits spec with this task as its parent (spec.ParentID
// is set), for the options SubmitChild does not take.
func (t *Task) SubmitChildSpec(ctx context.Context, spec taskyard.Spec) (*taskyard.Submission, error) {
	spec.ParentID = t.ID
	return t.run.s.w.client.Submit(ctx, spec)
}

// DecodeArg decodes positional argument i into v as encoding/json would
// (v a pointer: *int, *string, a struct with json tags, ...).
func (t *Task) DecodeArg(i int, v any) error {
	if i < 0 || i >= len(t.Args) {
		return fmt.Errorf("worker: %s has %d arguments, no argument %d", t.Name, len(t.Args), i)
	}
	data, err := json.Marshal(t.Args[i])
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("worker: %s argument %d: %w", t.Name, i, err)
	}
	return nil
}
