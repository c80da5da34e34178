package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"time"

	taskyard "github.com/taskyard/taskyard/clients/go"
)

// letterMarker is 12 random letters g-z: no digit and no hex digit, so a
// failure's fingerprint keeps it (numbers and hex ids are masked) and this
// run's failures form a group of their own.
func letterMarker() string {
	const letters = "ghijklmnopqrstuvwxyz"
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return string(b)
}

func redriveDeadLetters(ctx context.Context, e *env) error {
	if e.admin == nil {
		return errors.New("TASKYARD_ADMIN_TOKEN is not set (see clients/conformance/README.md)")
	}
	failures := e.admin.Failures()
	marker := letterMarker()
	var ids []string
	for range 3 {
		s, err := e.client.Submit(ctx, taskyard.Spec{Name: "fail", Args: []any{"conformance redrive " + marker}, MaxRetries: new(0)})
		if err != nil {
			return err
		}
		ids = append(ids, s.ID)
	}
	group := ""
	for _, id := range ids {
		if _, _, err := e.client.Wait(ctx, id, 30*time.Second); err != nil {
			return err
		}
		t, err := e.client.Get(ctx, id)
		if err != nil {
			return err
		}
		if t.State != taskyard.StateFailure || t.DeadLetterReason != taskyard.DeadLetterReasonRetriesExhausted || t.Failure == nil {
			return fmt.Errorf("task %s: state %s dead letter reason %s, want FAILURE, RETRIES_EXHAUSTED", id, t.State, t.DeadLetterReason)
		}
		if group == "" {
			group = t.Failure.GroupID
		}
		if group == "" || t.Failure.GroupID != group {
			return fmt.Errorf("task %s: failure group %q, want the same non-empty group as the others (%q)", id, t.Failure.GroupID, group)
		}
	}
	var count int64 = -1
	for g, err := range failures.AllGroups(ctx, taskyard.FailureListOptions{Filter: taskyard.FailureFilter{Name: "fail"}}) {
		if err != nil {
			return err
		}
		if g.GroupID == group {
			count = g.Count
		}
	}
	if count != 3 {
		return fmt.Errorf("group %s has count %d among the groups of fail, want 3", group, count)
	}
	only := taskyard.FailureFilter{GroupID: group}
	var listed []string
	for d, err := range failures.All(ctx, taskyard.FailureListOptions{Filter: only}) {
		if err != nil {
			return err
		}
		listed = append(listed, d.TaskID)
	}
	if !sameIDs(listed, ids) {
		return fmt.Errorf("the group's failures are %v, want %v", listed, ids)
	}

	dry, err := failures.Redrive(ctx, only, taskyard.RedriveOptions{Rate: 100, DryRun: true})
	if err != nil {
		return err
	}
	if dry.Matched != 3 || len(dry.Sample) != 3 || dry.Redrive != nil {
		return fmt.Errorf("dry run matched %d with %d in the sample and redrive %v, want 3, 3 and none", dry.Matched, len(dry.Sample), dry.Redrive)
	}
	if t, err := e.client.Get(ctx, ids[0]); err != nil || t.State != taskyard.StateFailure || t.Attempt != 1 {
		return fmt.Errorf("after the dry run task %s is %v (%v), want FAILURE at attempt 1", ids[0], t, err)
	}

	started, err := failures.Redrive(ctx, only, taskyard.RedriveOptions{Rate: 100, Note: marker})
	if err != nil {
		return err
	}
	r := started.Redrive
	if r == nil || r.ID == "" || r.Matched != 3 || r.CreatedBy == "" || r.Note != marker {
		return fmt.Errorf("redrive %+v, want an id, matched 3, created by someone, note %q", r, marker)
	}
	deadline := time.Now().Add(30 * time.Second)
	for r.State != taskyard.RedriveStateDone {
		if time.Now().After(deadline) {
			return fmt.Errorf("redrive %s is %s after 30 s (%d of %d re-queued), want DONE", r.ID, r.State, r.Requeued, r.Matched)
		}
		time.Sleep(100 * time.Millisecond)
		if r, err = failures.GetRedrive(ctx, r.ID); err != nil {
			return err
		}
	}
	if r.Requeued != 3 || r.Skipped != 0 || r.FinishedAt.IsZero() {
		return fmt.Errorf("done redrive %+v, want requeued 3, skipped 0, a finished time", r)
	}
	page, err := failures.Redrives(ctx, taskyard.RedriveListOptions{})
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(page.Redrives, func(x *taskyard.Redrive) bool { return x.ID == r.ID }) {
		return fmt.Errorf("redrive %s is not on the first page of redrives", r.ID)
	}
	var items []string
	for it, err := range failures.AllRedriveItems(ctx, r.ID, taskyard.RedriveListOptions{}) {
		if err != nil {
			return err
		}
		if it.Outcome != taskyard.RedriveOutcomeRequeued || it.FailedAttempt != 1 || it.NewAttempt != 2 {
			return fmt.Errorf("item %+v, want REQUEUED from attempt 1 to 2", it)
		}
		items = append(items, it.TaskID)
	}
	if !sameIDs(items, ids) {
		return fmt.Errorf("the redrive's items are %v, want %v", items, ids)
	}
	for _, id := range ids {
		t, _, err := e.client.Wait(ctx, id, 30*time.Second)
		if err != nil {
			return err
		}
		if t.State != taskyard.StateFailure || t.Attempt != 2 || t.RedriveID != r.ID || t.RedrivenFromAttempt != 1 {
			return fmt.Errorf("task %s: state %s attempt %d redrive %q from attempt %d, want it run again: FAILURE at attempt 2 from redrive %s, attempt 1",
				id, t.State, t.Attempt, t.RedriveID, t.RedrivenFromAttempt, r.ID)
		}
	}
	return nil
}

func sameIDs(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
