-- Taskyard schema: the schedulers' election (scheduler/election.py, docs/scaling.md).
--
-- Several schedulers may run; one leads (lanes, dispatch, surveys of the pools),
-- the others stand by. Schedulers hold no database connection, so the election
-- lives here and they reach it through the store (sql/leader.sql): the holder of
-- this one row leads until expires_at, renewing it well before; a standby takes
-- it once it expired or was released. Every expiry is by the database's clock
-- (now()), the one clock every scheduler shares. term numbers the leaderships:
-- it grows by one with each new holder, and the writes only a leader may make
-- (leases, restart reconciliation) carry it and are refused once it is over, so
-- a deposed leader that has not noticed yet changes nothing.
CREATE TABLE scheduler_leader (
  -- Exactly one row.
  one         boolean PRIMARY KEY DEFAULT true CHECK (one),
  term        bigint NOT NULL,
  holder      text NOT NULL,
  expires_at  timestamptz NOT NULL
);

-- Nobody yet: expired long ago, so the first standby takes term 1.
INSERT INTO scheduler_leader (term, holder, expires_at) VALUES (0, '', 'epoch');
