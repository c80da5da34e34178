-- Taskyard schema: redrives, a workflow that re-queues dead letters at a rate
-- (FailureService.Redrive, sql/redrives.sql, writes/redrives.py).
--
-- A redrive is accepted with the set it takes fixed: its row and one item per
-- matched dead letter, written in one transaction. The leading scheduler then
-- steps it (scheduler/redrives.py): each step, one transaction fenced by the
-- scheduler's term, takes pending items in order and re-queues their tasks as
-- a new attempt. The items' outcomes are the state of the work (a new leader
-- goes on from them: nothing lost or done twice) and, with the row, its audit:
-- who asked, when, the filter, how many, and what became of each task.

CREATE TABLE redrives (
  id           uuid PRIMARY KEY,
  -- taskyard.v1.RedriveState's number: RUNNING 1, PAUSED 2, DONE 3, CANCELLED 4.
  state        smallint NOT NULL DEFAULT 1 CHECK (state BETWEEN 1 AND 4),
  -- The FailureFilter as given (its JSON form).
  filter       jsonb NOT NULL DEFAULT '{}',
  -- Tasks a second, at most.
  rate         double precision NOT NULL CHECK (rate > 0),
  note         text NOT NULL DEFAULT '',
  -- The token's name the request came with.
  created_by   text NOT NULL DEFAULT '',
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  -- Set once DONE or CANCELLED.
  finished_at  timestamptz,
  matched      bigint NOT NULL DEFAULT 0,
  requeued     bigint NOT NULL DEFAULT 0,
  skipped      bigint NOT NULL DEFAULT 0
);
-- ListRedrives: newest first.
CREATE INDEX redrives_listing_idx ON redrives (created_at DESC, id DESC);
-- The RUNNING ones (a new leader resumes them).
CREATE INDEX redrives_running_idx ON redrives (created_at) WHERE state = 1;

CREATE TABLE redrive_items (
  redrive_id      uuid NOT NULL REFERENCES redrives (id) ON DELETE CASCADE,
  -- The order the items are taken in (oldest failure first).
  seq             integer NOT NULL,
  -- No reference: a task purged meanwhile leaves its item (SKIPPED, said why).
  task_id         uuid NOT NULL,
  -- taskyard.v1.RedriveOutcome's number: PENDING 1, REQUEUED 2, SKIPPED 3, CANCELLED 4.
  outcome         smallint NOT NULL DEFAULT 1 CHECK (outcome BETWEEN 1 AND 4),
  -- The failed attempt it is taken from, and the attempt it was given.
  failed_attempt  integer NOT NULL,
  new_attempt     integer NOT NULL DEFAULT 0,
  at              timestamptz,
  detail          text NOT NULL DEFAULT '',
  PRIMARY KEY (redrive_id, seq)
);
-- A step's next items.
CREATE INDEX redrive_items_pending_idx ON redrive_items (redrive_id, seq) WHERE outcome = 1;
