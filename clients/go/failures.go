package taskyard

import (
	"context"
	"iter"
	"maps"
	"time"

	taskyardv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// DeadLetterReason is why a task's failure is final: it is a dead letter.
type DeadLetterReason int32

const (
	DeadLetterReasonUnspecified      DeadLetterReason = DeadLetterReason(taskyardv1.DeadLetterReason_DEAD_LETTER_REASON_UNSPECIFIED)
	DeadLetterReasonRetriesExhausted DeadLetterReason = DeadLetterReason(taskyardv1.DeadLetterReason_DEAD_LETTER_REASON_RETRIES_EXHAUSTED) // its retry budget is spent
	DeadLetterReasonQuarantined      DeadLetterReason = DeadLetterReason(taskyardv1.DeadLetterReason_DEAD_LETTER_REASON_QUARANTINED)       // its worker died under it too often
	DeadLetterReasonNotRetryable     DeadLetterReason = DeadLetterReason(taskyardv1.DeadLetterReason_DEAD_LETTER_REASON_NOT_RETRYABLE)     // its error was marked not retryable
)

// String is the reason's name, e.g. "RETRIES_EXHAUSTED".
func (r DeadLetterReason) String() string {
	return enumName(taskyardv1.DeadLetterReason(r).String(), "DEAD_LETTER_REASON_")
}

// MaxFilterTaskIDs is the most ids a FailureFilter may name.
const MaxFilterTaskIDs = 1000

// A FailureFilter says which dead letters a call is about: the conjunction of
// the fields set. The gateway refuses one with nothing set unless All is true
// (INVALID_ARGUMENT on the field "filter").
type FailureFilter struct {
	GroupID string // a FailureGroup's GroupID
	Queue   string
	Name    string // a task name
	// The final failure happened at or after / before these instants; zero: unbounded.
	FailedAfter  time.Time
	FailedBefore time.Time
	Labels       map[string]string // every one of these labels, with these values
	TaskIDs      []string          // at most MaxFilterTaskIDs
	Reason       DeadLetterReason
	// Match every dead letter: required when nothing else is set.
	All bool
}

func (f FailureFilter) proto() (*taskyardv1.FailureFilter, error) {
	if len(f.TaskIDs) > MaxFilterTaskIDs {
		return nil, errorf("filter.task_ids", "at most %d ids, not %d", MaxFilterTaskIDs, len(f.TaskIDs))
	}
	p := &taskyardv1.FailureFilter{
		GroupId: f.GroupID,
		Queue:   f.Queue,
		Name:    f.Name,
		Labels:  maps.Clone(f.Labels),
		TaskIds: append([]string(nil), f.TaskIDs...),
		Reason:  taskyardv1.DeadLetterReason(f.Reason),
		All:     f.All,
	}
	if !f.FailedAfter.IsZero() {
		p.FailedAfter = timestamppb.New(f.FailedAfter)
	}
	if !f.FailedBefore.IsZero() {
		p.FailedBefore = timestamppb.New(f.FailedBefore)
	}
	return p, nil
}

func filterFromProto(p *taskyardv1.FailureFilter) FailureFilter {
	if p == nil {
		return FailureFilter{}
	}
	return FailureFilter{
		GroupID:      p.GetGroupId(),
		Queue:        p.GetQueue(),
		Name:         p.GetName(),
		FailedAfter:  timestamp(p.GetFailedAfter()),
		FailedBefore: timestamp(p.GetFailedBefore()),
		Labels:       p.GetLabels(),
		TaskIDs:      p.GetTaskIds(),
		Reason:       DeadLetterReason(p.GetReason()),
		All:          p.GetAll(),
	}
}

// A FailureGroup is the dead letters of one queue, task name and failure
// fingerprint (exception type, masked message, innermost frame of the task's
// own code).
type FailureGroup struct {
	// Stable for a queue, name and fingerprint: use it in FailureFilter.GroupID.
	GroupID string
	Queue   string
	Name    string
	// The fingerprint's parts: exception type, message with numbers, ids and
	// quoted values masked, and frame ("module.function"; empty without a
	// traceback).
	Type    string
	Message string
	Frame   string
	// Dead-lettered tasks in the group now.
	Count int64
	// The oldest and newest final failure among them.
	FirstSeen time.Time
	LastSeen  time.Time
	// Up to 5 ids, newest first, and the newest one's traceback.
	SampleTaskIDs   []string
	SampleTraceback string
}

func groupFromProto(p *taskyardv1.FailureGroup) *FailureGroup {
	return &FailureGroup{
		GroupID:         p.GetGroupId(),
		Queue:           p.GetQueue(),
		Name:            p.GetName(),
		Type:            p.GetType(),
		Message:         p.GetMessage(),
		Frame:           p.GetFrame(),
		Count:           p.GetCount(),
		FirstSeen:       timestamp(p.GetFirstSeen()),
		LastSeen:        timestamp(p.GetLastSeen()),
		SampleTaskIDs:   p.GetSampleTaskIds(),
		SampleTraceback: p.GetSampleTraceback(),
	}
}

// A DeadLetter is a task whose failure is final.
type DeadLetter struct {
	TaskID  string
	Queue   string
	Name    string
	Reason  DeadLetterReason
	GroupID string
	// Its final failure (attempt, type, message, traceback, when).
	Failure *Failure
	Labels  map[string]string
	// Times it was redriven before and failed again.
	Redrives int
}

func deadLetterFromProto(p *taskyardv1.DeadLetter) *DeadLetter {
	return &DeadLetter{
		TaskID:   p.GetTaskId(),
		Queue:    p.GetQueue(),
		Name:     p.GetName(),
		Reason:   DeadLetterReason(p.GetReason()),
		GroupID:  p.GetGroupId(),
		Failure:  failureFromProto(p.GetFailure()),
		Labels:   p.GetLabels(),
		Redrives: int(p.GetRedrives()),
	}
}

func deadLettersFromProto(ps []*taskyardv1.DeadLetter) []*DeadLetter {
	out := make([]*DeadLetter, len(ps))
	for i, p := range ps {
		out[i] = deadLetterFromProto(p)
	}
	return out
}

// FailureListOptions filter and page a listing of failure groups or dead
// letters.
type FailureListOptions struct {
	// Groups ignore its GroupID and TaskIDs, and take an empty filter as every
	// group; dead letters need a filter (or All).
	Filter   FailureFilter
	PageSize int // 1..1000; zero: 100
	// Where to start: a previous page's NextPageToken; empty: the first page.
	PageToken string
}

// A FailureGroupPage is one page of groups, most dead letters first.
type FailureGroupPage struct {
	Groups        []*FailureGroup
	NextPageToken string // empty on the last page
}

// A DeadLetterPage is one page of dead letters, newest failure first.
type DeadLetterPage struct {
	DeadLetters   []*DeadLetter
	NextPageToken string // empty on the last page
}

// Failures reads dead letters and their groups, redrives them and purges
// them (FailureService). Reads take a token with the read scope; Redrive
// (a dry run too), its controls and Purge the admin scope. Get it with
// [Client.Failures].
type Failures struct {
	c *Client
}

// Failures is the client's handle on dead letters and their redrives.
func (c *Client) Failures() *Failures { return &Failures{c: c} }

// Groups returns one page of failure groups, most dead letters first.
func (f *Failures) Groups(ctx context.Context, opts FailureListOptions) (*FailureGroupPage, error) {
	filter, err := pagedFilter(opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := f.c.callContext(ctx, 0)
	defer cancel()
	resp, err := f.c.failures.ListFailureGroups(ctx, &taskyardv1.ListFailureGroupsRequest{
		Filter:    filter,
		PageSize:  int32(opts.PageSize),
		PageToken: opts.PageToken,
	})
	if err != nil {
		return nil, callError(err)
	}
	page := &FailureGroupPage{Groups: make([]*FailureGroup, len(resp.GetGroups())), NextPageToken: resp.GetNextPageToken()}
	for i, g := range resp.GetGroups() {
		page.Groups[i] = groupFromProto(g)
	}
	return page, nil
}

// AllGroups iterates over every group opts match, fetching pages as the loop
// needs them; it ends as [Client.Tasks] does.
func (f *Failures) AllGroups(ctx context.Context, opts FailureListOptions) iter.Seq2[*FailureGroup, error] {
	return pages(opts.PageToken, func(token string) ([]*FailureGroup, string, error) {
		opts.PageToken = token
		page, err := f.Groups(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		return page.Groups, page.NextPageToken, nil
	})
}

// List returns one page of the dead letters opts.Filter matches, newest
// failure first.
func (f *Failures) List(ctx context.Context, opts FailureListOptions) (*DeadLetterPage, error) {
	filter, err := pagedFilter(opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := f.c.callContext(ctx, 0)
	defer cancel()
	resp, err := f.c.failures.ListFailures(ctx, &taskyardv1.ListFailuresRequest{
		Filter:    filter,
		PageSize:  int32(opts.PageSize),
		PageToken: opts.PageToken,
	})
	if err != nil {
		return nil, callError(err)
	}
	return &DeadLetterPage{DeadLetters: deadLettersFromProto(resp.GetFailures()), NextPageToken: resp.GetNextPageToken()}, nil
}

// All iterates over every dead letter opts.Filter matches, fetching pages as
// the loop needs them; it ends as [Client.Tasks] does.
func (f *Failures) All(ctx context.Context, opts FailureListOptions) iter.Seq2[*DeadLetter, error] {
	return pages(opts.PageToken, func(token string) ([]*DeadLetter, string, error) {
		opts.PageToken = token
		page, err := f.List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		return page.DeadLetters, page.NextPageToken, nil
	})
}

// PurgeOptions tune Purge.
type PurgeOptions struct {
	// Count what would be deleted; delete nothing.
	DryRun bool
}

// Purge deletes the dead letters filter matches (with their logs) now, and
// returns how many they were (would be, with DryRun).
func (f *Failures) Purge(ctx context.Context, filter FailureFilter, opts PurgeOptions) (int64, error) {
	p, err := filter.proto()
	if err != nil {
		return 0, err
	}
	ctx, cancel := f.c.callContext(ctx, 0)
	defer cancel()
	resp, err := f.c.failures.PurgeDeadLetters(ctx, &taskyardv1.PurgeDeadLettersRequest{Filter: p, DryRun: opts.DryRun})
	if err != nil {
		return 0, callError(err)
	}
	return resp.GetPurged(), nil
}

func pagedFilter(opts FailureListOptions) (*taskyardv1.FailureFilter, error) {
	if opts.PageSize < 0 || opts.PageSize > MaxPageSize {
		return nil, errorf("page_size", "must be 0..%d, not %d", MaxPageSize, opts.PageSize)
	}
	return opts.Filter.proto()
}
