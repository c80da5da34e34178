package taskyard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	taskyardv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

var failedAt = time.Date(2026, 12, 1, 10, 42, 57, 0, time.UTC)

// fakeFailures keeps dead letters of one group and the redrives made of
// them, as the gateway would: a redrive moves its tasks out of the dead
// letters at once (no pacing), every listing pages one item at a time (the
// token is the next item's index).
type fakeFailures struct {
	taskyardv1.UnimplementedFailureServiceServer
	mu       sync.Mutex
	dead     []*taskyardv1.DeadLetter
	redrives []*taskyardv1.Redrive
	items    map[string][]*taskyardv1.RedriveItem
	filters  []*taskyardv1.FailureFilter // every filter received, in order
	requests []*taskyardv1.RedriveRequest
	purges   []*taskyardv1.PurgeDeadLettersRequest
}

func newFakeFailures(n int) *fakeFailures {
	f := &fakeFailures{items: map[string][]*taskyardv1.RedriveItem{}}
	for i := range n {
		f.dead = append(f.dead, &taskyardv1.DeadLetter{
			TaskId:  fmt.Sprintf("t-%d", i),
			Queue:   "default",
			Name:    "charge",
			Reason:  taskyardv1.DeadLetterReason_DEAD_LETTER_REASON_RETRIES_EXHAUSTED,
			GroupId: "g1",
			Failure: &taskyardv1.TaskFailure{Type: "RuntimeError", Message: "503 from payments", Attempt: 3, FailedAt: timestamppb.New(failedAt), GroupId: "g1"},
			Labels:  map[string]string{"tenant": "acme"},
		})
	}
	return f
}

// page returns items[token:token+1] and the token of the next one.
func page[T any](items []T, token string) ([]T, string, error) {
	i := 0
	if token != "" {
		var err error
		if i, err = strconv.Atoi(token); err != nil || i < 0 || i > len(items) {
			return nil, "", status.Error(codes.InvalidArgument, "bad page token")
		}
	}
	if i == len(items) {
		return nil, "", nil
	}
	next := ""
	if i+1 < len(items) {
		next = strconv.Itoa(i + 1)
	}
	return items[i : i+1], next, nil
}

func (f *fakeFailures) matching(filter *taskyardv1.FailureFilter) []*taskyardv1.DeadLetter {
	var out []*taskyardv1.DeadLetter
	for _, d := range f.dead {
		if filter.GetGroupId() != "" && d.GetGroupId() != filter.GetGroupId() {
			continue
		}
		if ids := filter.GetTaskIds(); len(ids) > 0 && !slices.Contains(ids, d.GetTaskId()) {
			continue
		}
		out = append(out, d)
	}
	return out
}

func (f *fakeFailures) ListFailureGroups(_ context.Context, req *taskyardv1.ListFailureGroupsRequest) (*taskyardv1.ListFailureGroupsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.filters = append(f.filters, req.GetFilter())
	groups := []*taskyardv1.FailureGroup{
		{GroupId: "g1", Queue: "default", Name: "charge", Type: "RuntimeError", Message: "<n> from payments", Frame: "billing:charge",
			Count: int64(len(f.dead)), FirstSeen: timestamppb.New(failedAt), LastSeen: timestamppb.New(failedAt.Add(time.Minute)),
			SampleTaskIds: []string{"t-1", "t-0"}, SampleTraceback: "Traceback ..."},
		{GroupId: "g2", Queue: "mail", Name: "send", Count: 1},
	}
	got, next, err := page(groups, req.GetPageToken())
	if err != nil {
		return nil, err
	}
	return &taskyardv1.ListFailureGroupsResponse{Groups: got, NextPageToken: next}, nil
}

func (f *fakeFailures) ListFailures(_ context.Context, req *taskyardv1.ListFailuresRequest) (*taskyardv1.ListFailuresResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.filters = append(f.filters, req.GetFilter())
	got, next, err := page(f.matching(req.GetFilter()), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	return &taskyardv1.ListFailuresResponse{Failures: got, NextPageToken: next}, nil
}

func (f *fakeFailures) Redrive(_ context.Context, req *taskyardv1.RedriveRequest) (*taskyardv1.RedriveResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, req)
	matched := f.matching(req.GetFilter())
	if !req.GetDryRun() && len(matched) == 0 {
		st, _ := status.New(codes.FailedPrecondition, "nothing to redrive").
			WithDetails(&errdetails.ErrorInfo{Reason: "NOTHING_TO_REDRIVE", Domain: Domain})
		return nil, st.Err()
	}
	resp := &taskyardv1.RedriveResponse{Matched: int64(len(matched)), Sample: matched[:min(len(matched), 10)]}
	if req.GetDryRun() {
		return resp, nil
	}
	r := &taskyardv1.Redrive{
		Id: fmt.Sprintf("r-%d", len(f.redrives)+1), Filter: req.GetFilter(), Rate: req.GetRate(), Note: req.GetNote(),
		State: taskyardv1.RedriveState_REDRIVE_STATE_RUNNING, CreatedBy: "ops", CreatedAt: timestamppb.New(failedAt),
		Matched: int64(len(matched)),
	}
	for _, d := range matched {
		f.items[r.Id] = append(f.items[r.Id], &taskyardv1.RedriveItem{
			TaskId: d.GetTaskId(), Outcome: taskyardv1.RedriveOutcome_REDRIVE_OUTCOME_REQUEUED,
			FailedAttempt: d.GetFailure().GetAttempt(), NewAttempt: d.GetFailure().GetAttempt() + 1, At: timestamppb.New(failedAt),
		})
	}
	f.redrives = append([]*taskyardv1.Redrive{r}, f.redrives...)
	resp.Redrive = r
	return resp, nil
}

func (f *fakeFailures) find(id string) (*taskyardv1.Redrive, error) {
	for _, r := range f.redrives {
		if r.GetId() == id {
			return r, nil
		}
	}
	return nil, status.Error(codes.NotFound, "no redrive "+id)
}

func (f *fakeFailures) GetRedrive(_ context.Context, req *taskyardv1.GetRedriveRequest) (*taskyardv1.GetRedriveResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.find(req.GetId())
	if err != nil {
		return nil, err
	}
	return &taskyardv1.GetRedriveResponse{Redrive: r}, nil
}

func (f *fakeFailures) ListRedrives(_ context.Context, req *taskyardv1.ListRedrivesRequest) (*taskyardv1.ListRedrivesResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	got, next, err := page(f.redrives, req.GetPageToken())
	if err != nil {
		return nil, err
	}
	return &taskyardv1.ListRedrivesResponse{Redrives: got, NextPageToken: next}, nil
}

func (f *fakeFailures) ListRedriveItems(_ context.Context, req *taskyardv1.ListRedriveItemsRequest) (*taskyardv1.ListRedriveItemsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.find(req.GetId()); err != nil {
		return nil, err
	}
	got, next, err := page(f.items[req.GetId()], req.GetPageToken())
	if err != nil {
		return nil, err
	}
	return &taskyardv1.ListRedriveItemsResponse{Items: got, NextPageToken: next}, nil
}

// control moves a redrive from one state to another, or refuses as the
// gateway does.
func (f *fakeFailures) control(id string, from []taskyardv1.RedriveState, to taskyardv1.RedriveState) (*taskyardv1.Redrive, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.find(id)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(from, r.GetState()) {
		return nil, status.Errorf(codes.FailedPrecondition, "redrive %s is %s", id, r.GetState())
	}
	r.State = to
	return r, nil
}

func (f *fakeFailures) PauseRedrive(_ context.Context, req *taskyardv1.PauseRedriveRequest) (*taskyardv1.PauseRedriveResponse, error) {
	r, err := f.control(req.GetId(), []taskyardv1.RedriveState{taskyardv1.RedriveState_REDRIVE_STATE_RUNNING}, taskyardv1.RedriveState_REDRIVE_STATE_PAUSED)
	if err != nil {
		return nil, err
	}
	return &taskyardv1.PauseRedriveResponse{Redrive: r}, nil
}

func (f *fakeFailures) ResumeRedrive(_ context.Context, req *taskyardv1.ResumeRedriveRequest) (*taskyardv1.ResumeRedriveResponse, error) {
	r, err := f.control(req.GetId(), []taskyardv1.RedriveState{taskyardv1.RedriveState_REDRIVE_STATE_PAUSED}, taskyardv1.RedriveState_REDRIVE_STATE_RUNNING)
	if err != nil {
		return nil, err
	}
	return &taskyardv1.ResumeRedriveResponse{Redrive: r}, nil
}

func (f *fakeFailures) CancelRedrive(_ context.Context, req *taskyardv1.CancelRedriveRequest) (*taskyardv1.CancelRedriveResponse, error) {
	live := []taskyardv1.RedriveState{taskyardv1.RedriveState_REDRIVE_STATE_RUNNING, taskyardv1.RedriveState_REDRIVE_STATE_PAUSED}
	r, err := f.control(req.GetId(), live, taskyardv1.RedriveState_REDRIVE_STATE_CANCELLED)
	if err != nil {
		return nil, err
	}
	return &taskyardv1.CancelRedriveResponse{Redrive: r}, nil
}

func (f *fakeFailures) PurgeDeadLetters(_ context.Context, req *taskyardv1.PurgeDeadLettersRequest) (*taskyardv1.PurgeDeadLettersResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.purges = append(f.purges, req)
	return &taskyardv1.PurgeDeadLettersResponse{Purged: int64(len(f.matching(req.GetFilter())))}, nil
}

func startFailures(t *testing.T, n int) (*Client, *fakeFailures) {
	t.Helper()
	f := newFakeFailures(n)
	return startServer(t, func(srv *grpc.Server) { taskyardv1.RegisterFailureServiceServer(srv, f) }), f
}

func TestFailureGroupsPageAndSendTheFilter(t *testing.T) {
	c, f := startFailures(t, 3)
	ctx := context.Background()
	after := failedAt.Add(-time.Hour)
	opts := FailureListOptions{Filter: FailureFilter{Queue: "default", Reason: DeadLetterReasonRetriesExhausted, FailedAfter: after}, PageSize: 1}
	page, err := c.Failures().Groups(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := &FailureGroup{
		GroupID: "g1", Queue: "default", Name: "charge", Type: "RuntimeError", Message: "<n> from payments", Frame: "billing:charge",
		Count: 3, FirstSeen: failedAt, LastSeen: failedAt.Add(time.Minute), SampleTaskIDs: []string{"t-1", "t-0"}, SampleTraceback: "Traceback ...",
	}
	if len(page.Groups) != 1 || fmt.Sprint(*page.Groups[0]) != fmt.Sprint(*want) || page.NextPageToken != "1" {
		t.Fatalf("Groups = %+v (next %q), want %+v", page.Groups, page.NextPageToken, want)
	}
	sent := f.filters[0]
	if sent.GetQueue() != "default" || sent.GetReason() != taskyardv1.DeadLetterReason_DEAD_LETTER_REASON_RETRIES_EXHAUSTED ||
		!sent.GetFailedAfter().AsTime().Equal(after) || sent.GetFailedBefore() != nil || sent.GetAll() {
		t.Errorf("filter sent %v", sent)
	}
	var ids []string
	for g, err := range c.Failures().AllGroups(ctx, opts) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, g.GroupID)
	}
	if !slices.Equal(ids, []string{"g1", "g2"}) {
		t.Errorf("AllGroups gave %v", ids)
	}
	if _, err := c.Failures().Groups(ctx, FailureListOptions{PageSize: MaxPageSize + 1}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("Groups(PageSize over the most) = %v, want INVALID_ARGUMENT", err)
	}
}

func TestFailuresListADeadLetterWithItsFinalFailure(t *testing.T) {
	c, f := startFailures(t, 3)
	ctx := context.Background()
	opts := FailureListOptions{Filter: FailureFilter{GroupID: "g1", TaskIDs: []string{"t-0", "t-2"}, Labels: map[string]string{"tenant": "acme"}}}
	var got []*DeadLetter
	for d, err := range c.Failures().All(ctx, opts) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	if len(got) != 2 || got[0].TaskID != "t-0" || got[1].TaskID != "t-2" {
		t.Fatalf("All gave %+v", got)
	}
	d := got[0]
	if d.Queue != "default" || d.Name != "charge" || d.Reason != DeadLetterReasonRetriesExhausted || d.GroupID != "g1" || d.Labels["tenant"] != "acme" {
		t.Errorf("dead letter %+v", d)
	}
	if d.Failure == nil || d.Failure.Type != "RuntimeError" || d.Failure.Attempt != 3 || !d.Failure.FailedAt.Equal(failedAt) || d.Failure.GroupID != "g1" {
		t.Errorf("its failure %+v", d.Failure)
	}
	if d.Reason.String() != "RETRIES_EXHAUSTED" {
		t.Errorf("reason %s", d.Reason)
	}
	sent := f.filters[0]
	if sent.GetGroupId() != "g1" || !slices.Equal(sent.GetTaskIds(), []string{"t-0", "t-2"}) || sent.GetLabels()["tenant"] != "acme" {
		t.Errorf("filter sent %v", sent)
	}
}

func TestRedriveDryRunThenRealRunAndItsAudit(t *testing.T) {
	c, f := startFailures(t, 3)
	ctx := context.Background()
	filter := FailureFilter{GroupID: "g1"}
	dry, err := c.Failures().Redrive(ctx, filter, RedriveOptions{Rate: 50, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Redrive != nil || dry.Matched != 3 || len(dry.Sample) != 3 || dry.Sample[0].TaskID != "t-0" {
		t.Fatalf("dry run = %+v", dry)
	}
	real, err := c.Failures().Redrive(ctx, filter, RedriveOptions{Rate: 200, Note: "payments back"})
	if err != nil {
		t.Fatal(err)
	}
	r := real.Redrive
	if r == nil || r.ID != "r-1" || r.State != RedriveStateRunning || r.Rate != 200 || r.Note != "payments back" ||
		r.Matched != 3 || r.CreatedBy != "ops" || !r.CreatedAt.Equal(failedAt) || r.Filter.GroupID != "g1" || !r.FinishedAt.IsZero() {
		t.Fatalf("redrive = %+v", r)
	}
	if len(f.requests) != 2 || !f.requests[0].GetDryRun() || f.requests[1].GetDryRun() || f.requests[1].GetRate() != 200 {
		t.Errorf("requests sent %v", f.requests)
	}
	got, err := c.Failures().GetRedrive(ctx, r.ID)
	if err != nil || got.ID != r.ID || got.State.String() != "RUNNING" {
		t.Fatalf("GetRedrive = %+v, %v", got, err)
	}
	var items []*RedriveItem
	for it, err := range c.Failures().AllRedriveItems(ctx, r.ID, RedriveListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, it)
	}
	if len(items) != 3 || items[0].TaskID != "t-0" || items[0].Outcome != RedriveOutcomeRequeued ||
		items[0].FailedAttempt != 3 || items[0].NewAttempt != 4 || !items[0].At.Equal(failedAt) || items[0].Outcome.String() != "REQUEUED" {
		t.Errorf("items %+v", items)
	}
	_, err = c.Failures().GetRedrive(ctx, "r-404")
	if status.Code(err) != codes.NotFound {
		t.Errorf("GetRedrive(unknown) = %v, want NOT_FOUND", err)
	}
}

func TestRedriveRefusesABadRateOrTooManyIdsBeforeSending(t *testing.T) {
	c, f := startFailures(t, 1)
	ctx := context.Background()
	for _, rate := range []float64{0, -1, math.NaN(), math.Inf(1), MaxRedriveRate + 1} {
		_, err := c.Failures().Redrive(ctx, FailureFilter{All: true}, RedriveOptions{Rate: rate})
		var terr *Error
		if !errors.As(err, &terr) || terr.Code != codes.InvalidArgument {
			t.Errorf("Redrive(rate %g) = %v, want INVALID_ARGUMENT", rate, err)
			continue
		}
		if _, ok := terr.Violation("rate"); !ok {
			t.Errorf("Redrive(rate %g): violations %v, want one on rate", rate, terr.Violations)
		}
	}
	ids := make([]string, MaxFilterTaskIDs+1)
	for i := range ids {
		ids[i] = fmt.Sprintf("t-%d", i)
	}
	_, err := c.Failures().Redrive(ctx, FailureFilter{TaskIDs: ids}, RedriveOptions{Rate: 1})
	var terr *Error
	if !errors.As(err, &terr) || terr.Code != codes.InvalidArgument {
		t.Errorf("Redrive(%d ids) = %v, want INVALID_ARGUMENT", len(ids), err)
	} else if _, ok := terr.Violation("filter.task_ids"); !ok {
		t.Errorf("violations %v, want one on filter.task_ids", terr.Violations)
	}
	if len(f.requests) != 0 {
		t.Errorf("%d requests reached the gateway", len(f.requests))
	}
	// The gateway's refusal comes back with its reason.
	_, err = c.Failures().Redrive(ctx, FailureFilter{GroupID: "nothing"}, RedriveOptions{Rate: 1})
	if !errors.As(err, &terr) || terr.Code != codes.FailedPrecondition || terr.Reason != "NOTHING_TO_REDRIVE" {
		t.Errorf("Redrive(matching nothing) = %v, want FAILED_PRECONDITION NOTHING_TO_REDRIVE", err)
	}
}

func TestRedrivePauseResumeCancelAndListing(t *testing.T) {
	c, _ := startFailures(t, 2)
	ctx := context.Background()
	first, err := c.Failures().Redrive(ctx, FailureFilter{TaskIDs: []string{"t-0"}}, RedriveOptions{Rate: 1})
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Failures().Redrive(ctx, FailureFilter{TaskIDs: []string{"t-1"}}, RedriveOptions{Rate: 1})
	if err != nil {
		t.Fatal(err)
	}
	id := first.Redrive.ID
	steps := []struct {
		name string
		do   func(context.Context, string) (*Redrive, error)
		want RedriveState
	}{
		{"pause", c.Failures().PauseRedrive, RedriveStatePaused},
		{"resume", c.Failures().ResumeRedrive, RedriveStateRunning},
		{"cancel", c.Failures().CancelRedrive, RedriveStateCancelled},
	}
	for _, s := range steps {
		r, err := s.do(ctx, id)
		if err != nil || r.State != s.want {
			t.Fatalf("%s = %+v, %v; want %s", s.name, r, err, s.want)
		}
	}
	if !RedriveStateCancelled.Final() || RedriveStatePaused.Final() {
		t.Error("Final(): CANCELLED is final, PAUSED is not")
	}
	if _, err := c.Failures().CancelRedrive(ctx, id); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("cancel of a cancelled redrive = %v, want FAILED_PRECONDITION", err)
	}
	page, err := c.Failures().Redrives(ctx, RedriveListOptions{PageSize: 1})
	if err != nil || len(page.Redrives) != 1 || page.Redrives[0].ID != second.Redrive.ID || page.NextPageToken == "" {
		t.Fatalf("Redrives = %+v, %v", page, err)
	}
	var ids []string
	for r, err := range c.Failures().AllRedrives(ctx, RedriveListOptions{PageSize: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	if !slices.Equal(ids, []string{second.Redrive.ID, id}) {
		t.Errorf("AllRedrives gave %v, want newest first", ids)
	}
}

func TestPurgeDeadLettersDryRunSendsTheFilter(t *testing.T) {
	c, f := startFailures(t, 4)
	n, err := c.Failures().Purge(context.Background(), FailureFilter{GroupID: "g1"}, PurgeOptions{DryRun: true})
	if err != nil || n != 4 {
		t.Fatalf("Purge = %d, %v", n, err)
	}
	if len(f.purges) != 1 || !f.purges[0].GetDryRun() || f.purges[0].GetFilter().GetGroupId() != "g1" {
		t.Errorf("purge sent %v", f.purges)
	}
}

func TestTaskSaysItsDeadLetterReasonAndRedrive(t *testing.T) {
	p := &taskyardv1.Task{
		Id: "t1", State: taskyardv1.TaskState_TASK_STATE_FAILURE, Attempt: 2,
		DeadLetterReason: taskyardv1.DeadLetterReason_DEAD_LETTER_REASON_QUARANTINED,
		RedriveId:        "r-1", RedrivenFromAttempt: 1,
		Failures: []*taskyardv1.TaskFailure{
			{Attempt: 1, GroupId: "g1", RedriveId: "r-1"},
			{Attempt: 2, GroupId: "g1"},
		},
	}
	task := taskFromProto(proto.Clone(p).(*taskyardv1.Task))
	if task.DeadLetterReason != DeadLetterReasonQuarantined || task.RedriveID != "r-1" || task.RedrivenFromAttempt != 1 {
		t.Errorf("task %+v", task)
	}
	if task.Failures[0].RedriveID != "r-1" || task.Failures[0].GroupID != "g1" || task.Failures[1].RedriveID != "" {
		t.Errorf("failures %+v", task.Failures)
	}
}
