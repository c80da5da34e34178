-- Taskyard schema: the state-changing bus requests the stores have carried out, by
-- the message id of their sealed envelope (result_store/bus_requests.py). Each id is
-- recorded in the transaction of the request's effect, so a sealed request captured
-- from the wire and replayed to another store on this database, or to a store that
-- restarted, finds its id here and is not carried out again: it is answered with the
-- reply the request got, kept with the id in the same transaction (a requester that
-- lost that reply sends the request again, under the same id). Ids are kept a few
-- replay windows (a replay older than the window is refused by the seal already),
-- then forgotten by the retention loop.
CREATE TABLE bus_requests (
  id text PRIMARY KEY,
  kind integer NOT NULL,
  -- The serialized reply payload; NULL until the transaction that recorded the id
  -- has its reply (it commits with it).
  reply bytea,
  seen_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX bus_requests_seen_idx ON bus_requests (seen_at);
