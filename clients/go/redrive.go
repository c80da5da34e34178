package taskyard

import (
	"context"
	"iter"
	"math"
	"time"

	taskyardv1 "github.com/taskyard/taskyard/clients/go/gen/taskyard/v1"
)

// RedriveState is where a redrive is in its life.
type RedriveState int32

const (
	RedriveStateUnspecified RedriveState = RedriveState(taskyardv1.RedriveState_REDRIVE_STATE_UNSPECIFIED)
	RedriveStateRunning     RedriveState = RedriveState(taskyardv1.RedriveState_REDRIVE_STATE_RUNNING)
	RedriveStatePaused      RedriveState = RedriveState(taskyardv1.RedriveState_REDRIVE_STATE_PAUSED)
	RedriveStateDone        RedriveState = RedriveState(taskyardv1.RedriveState_REDRIVE_STATE_DONE) // every matched task taken or skipped
	RedriveStateCancelled   RedriveState = RedriveState(taskyardv1.RedriveState_REDRIVE_STATE_CANCELLED)
)

// String is the state's name, e.g. "RUNNING".
func (s RedriveState) String() string {
	return enumName(taskyardv1.RedriveState(s).String(), "REDRIVE_STATE_")
}

// Final reports whether the redrive has ended (DONE or CANCELLED).
func (s RedriveState) Final() bool { return s == RedriveStateDone || s == RedriveStateCancelled }

// RedriveOutcome is what a redrive did with one task it matched.
type RedriveOutcome int32

const (
	RedriveOutcomeUnspecified RedriveOutcome = RedriveOutcome(taskyardv1.RedriveOutcome_REDRIVE_OUTCOME_UNSPECIFIED)
	RedriveOutcomePending     RedriveOutcome = RedriveOutcome(taskyardv1.RedriveOutcome_REDRIVE_OUTCOME_PENDING) // not reached yet
	RedriveOutcomeRequeued    RedriveOutcome = RedriveOutcome(taskyardv1.RedriveOutcome_REDRIVE_OUTCOME_REQUEUED)
	RedriveOutcomeSkipped     RedriveOutcome = RedriveOutcome(taskyardv1.RedriveOutcome_REDRIVE_OUTCOME_SKIPPED)
	RedriveOutcomeCancelled   RedriveOutcome = RedriveOutcome(taskyardv1.RedriveOutcome_REDRIVE_OUTCOME_CANCELLED) // cancelled first: still a dead letter
)

// String is the outcome's name, e.g. "REQUEUED".
func (o RedriveOutcome) String() string {
	return enumName(taskyardv1.RedriveOutcome(o).String(), "REDRIVE_OUTCOME_")
}

// MaxRedriveRate is the fastest a redrive may re-queue, in tasks a second.
const MaxRedriveRate = 10000

// A Redrive re-queues the dead letters a filter matched, at most Rate a
// second, on the leading scheduler; it is its own audit record.
type Redrive struct {
	ID     string
	Filter FailureFilter
	Rate   float64 // tasks a second, at most
	State  RedriveState
	// The name of the token it was asked with ("dev" on a loopback gateway
	// without tokens).
	CreatedBy  string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt time.Time // once DONE or CANCELLED
	// Tasks matched when it was accepted; re-queued so far; skipped because
	// no longer a dead letter when their turn came.
	Matched  int64
	Requeued int64
	Skipped  int64
	Note     string
}

func redriveFromProto(p *taskyardv1.Redrive) *Redrive {
	if p == nil {
		return nil
	}
	return &Redrive{
		ID:         p.GetId(),
		Filter:     filterFromProto(p.GetFilter()),
		Rate:       p.GetRate(),
		State:      RedriveState(p.GetState()),
		CreatedBy:  p.GetCreatedBy(),
		CreatedAt:  timestamp(p.GetCreatedAt()),
		UpdatedAt:  timestamp(p.GetUpdatedAt()),
		FinishedAt: timestamp(p.GetFinishedAt()),
		Matched:    p.GetMatched(),
		Requeued:   p.GetRequeued(),
		Skipped:    p.GetSkipped(),
		Note:       p.GetNote(),
	}
}

// A RedriveItem is what became of one task a redrive matched.
type RedriveItem struct {
	TaskID  string
	Outcome RedriveOutcome
	// The failed attempt it was taken from, and the attempt it was given.
	FailedAttempt int
	NewAttempt    int
	At            time.Time
	Detail        string // why it was skipped
}

// RedriveOptions tune Failures.Redrive.
type RedriveOptions struct {
	// Tasks a second: more than 0, at most MaxRedriveRate.
	Rate float64
	// Count the matches and return a sample; change nothing.
	DryRun bool
	// Kept with the redrive (at most 1024 bytes).
	Note string
}

// A RedriveResult is the answer to Failures.Redrive.
type RedriveResult struct {
	// The redrive accepted; nil for a dry run.
	Redrive *Redrive
	// Dead letters the filter matches (at most 100,000 in one redrive).
	Matched int64
	// Up to 10 of them, newest failure first.
	Sample []*DeadLetter
}

// Redrive re-queues the dead letters filter matches, each as a new attempt,
// at most opts.Rate a second. The set is fixed when the call is accepted; the
// leading scheduler runs it, across restarts. With opts.DryRun it only
// counts them and returns a sample. A filter naming a task that is not a dead
// letter is FAILED_PRECONDITION, and so is one that matches nothing.
func (f *Failures) Redrive(ctx context.Context, filter FailureFilter, opts RedriveOptions) (*RedriveResult, error) {
	if math.IsNaN(opts.Rate) || opts.Rate <= 0 || opts.Rate > MaxRedriveRate {
		return nil, errorf("rate", "must be more than 0 and at most %d tasks a second, not %g", MaxRedriveRate, opts.Rate)
	}
	p, err := filter.proto()
	if err != nil {
		return nil, err
	}
	ctx, cancel := f.c.callContext(ctx, 0)
	defer cancel()
	resp, err := f.c.failures.Redrive(ctx, &taskyardv1.RedriveRequest{Filter: p, Rate: opts.Rate, DryRun: opts.DryRun, Note: opts.Note})
	if err != nil {
		return nil, callError(err)
	}
	return &RedriveResult{
		Redrive: redriveFromProto(resp.GetRedrive()),
		Matched: resp.GetMatched(),
		Sample:  deadLettersFromProto(resp.GetSample()),
	}, nil
}

// GetRedrive returns the redrive with this id and its progress.
func (f *Failures) GetRedrive(ctx context.Context, id string) (*Redrive, error) {
	ctx, cancel := f.c.callContext(ctx, 0)
	defer cancel()
	resp, err := f.c.failures.GetRedrive(ctx, &taskyardv1.GetRedriveRequest{Id: id})
	if err != nil {
		return nil, callError(err)
	}
	return redriveFromProto(resp.GetRedrive()), nil
}

// RedriveListOptions page a listing of redrives or of a redrive's items.
type RedriveListOptions struct {
	PageSize int // 1..1000; zero: 100
	// Where to start: a previous page's NextPageToken; empty: the first page.
	PageToken string
}

// A RedrivePage is one page of redrives, newest first.
type RedrivePage struct {
	Redrives      []*Redrive
	NextPageToken string // empty on the last page
}

// A RedriveItemPage is one page of a redrive's items.
type RedriveItemPage struct {
	Items         []*RedriveItem
	NextPageToken string // empty on the last page
}

// Redrives returns one page of redrives, newest first.
func (f *Failures) Redrives(ctx context.Context, opts RedriveListOptions) (*RedrivePage, error) {
	if opts.PageSize < 0 || opts.PageSize > MaxPageSize {
		return nil, errorf("page_size", "must be 0..%d, not %d", MaxPageSize, opts.PageSize)
	}
	ctx, cancel := f.c.callContext(ctx, 0)
	defer cancel()
	resp, err := f.c.failures.ListRedrives(ctx, &taskyardv1.ListRedrivesRequest{PageSize: int32(opts.PageSize), PageToken: opts.PageToken})
	if err != nil {
		return nil, callError(err)
	}
	page := &RedrivePage{Redrives: make([]*Redrive, len(resp.GetRedrives())), NextPageToken: resp.GetNextPageToken()}
	for i, r := range resp.GetRedrives() {
		page.Redrives[i] = redriveFromProto(r)
	}
	return page, nil
}

// AllRedrives iterates over every redrive, newest first; it ends as
// [Client.Tasks] does.
func (f *Failures) AllRedrives(ctx context.Context, opts RedriveListOptions) iter.Seq2[*Redrive, error] {
	return pages(opts.PageToken, func(token string) ([]*Redrive, string, error) {
		opts.PageToken = token
		page, err := f.Redrives(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		return page.Redrives, page.NextPageToken, nil
	})
}

// RedriveItems returns one page of what became of each task the redrive id
// matched: its audit.
func (f *Failures) RedriveItems(ctx context.Context, id string, opts RedriveListOptions) (*RedriveItemPage, error) {
	if opts.PageSize < 0 || opts.PageSize > MaxPageSize {
		return nil, errorf("page_size", "must be 0..%d, not %d", MaxPageSize, opts.PageSize)
	}
	ctx, cancel := f.c.callContext(ctx, 0)
	defer cancel()
	resp, err := f.c.failures.ListRedriveItems(ctx, &taskyardv1.ListRedriveItemsRequest{Id: id, PageSize: int32(opts.PageSize), PageToken: opts.PageToken})
	if err != nil {
		return nil, callError(err)
	}
	page := &RedriveItemPage{Items: make([]*RedriveItem, len(resp.GetItems())), NextPageToken: resp.GetNextPageToken()}
	for i, it := range resp.GetItems() {
		page.Items[i] = &RedriveItem{
			TaskID:        it.GetTaskId(),
			Outcome:       RedriveOutcome(it.GetOutcome()),
			FailedAttempt: int(it.GetFailedAttempt()),
			NewAttempt:    int(it.GetNewAttempt()),
			At:            timestamp(it.GetAt()),
			Detail:        it.GetDetail(),
		}
	}
	return page, nil
}

// AllRedriveItems iterates over every item of the redrive id; it ends as
// [Client.Tasks] does.
func (f *Failures) AllRedriveItems(ctx context.Context, id string, opts RedriveListOptions) iter.Seq2[*RedriveItem, error] {
	return pages(opts.PageToken, func(token string) ([]*RedriveItem, string, error) {
		opts.PageToken = token
		page, err := f.RedriveItems(ctx, id, opts)
		if err != nil {
			return nil, "", err
		}
		return page.Items, page.NextPageToken, nil
	})
}

// PauseRedrive stops a RUNNING redrive where it is; otherwise
// FAILED_PRECONDITION.
func (f *Failures) PauseRedrive(ctx context.Context, id string) (*Redrive, error) {
	ctx, cancel := f.c.callContext(ctx, 0)
	defer cancel()
	resp, err := f.c.failures.PauseRedrive(ctx, &taskyardv1.PauseRedriveRequest{Id: id})
	if err != nil {
		return nil, callError(err)
	}
	return redriveFromProto(resp.GetRedrive()), nil
}

// ResumeRedrive goes on with a PAUSED redrive; otherwise FAILED_PRECONDITION.
func (f *Failures) ResumeRedrive(ctx context.Context, id string) (*Redrive, error) {
	ctx, cancel := f.c.callContext(ctx, 0)
	defer cancel()
	resp, err := f.c.failures.ResumeRedrive(ctx, &taskyardv1.ResumeRedriveRequest{Id: id})
	if err != nil {
		return nil, callError(err)
	}
	return redriveFromProto(resp.GetRedrive()), nil
}

// CancelRedrive ends a redrive: the tasks it has not re-queued yet stay dead
// letters. FAILED_PRECONDITION once DONE or CANCELLED.
func (f *Failures) CancelRedrive(ctx context.Context, id string) (*Redrive, error) {
	ctx, cancel := f.c.callContext(ctx, 0)
	defer cancel()
	resp, err := f.c.failures.CancelRedrive(ctx, &taskyardv1.CancelRedriveRequest{Id: id})
	if err != nil {
		return nil, callError(err)
	}
	return redriveFromProto(resp.GetRedrive()), nil
}
