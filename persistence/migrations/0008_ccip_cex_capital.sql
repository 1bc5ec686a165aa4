-- Issue 5, items 3, 5, 7: the tables of ccip_stranded_reaper,
-- capital_transfer_followup and cex_transfer_ingest (SPEC §2 names).

-- A CCIP send is written ahead (one row per node attempt) before the
-- message goes to the router, and resolved once its message id is known.
-- A row still pending after MG_CCIP_STRANDED_AGE_SECONDS is stranded: the
-- reaper marks it and hands its node to recovery (UNKNOWN), because the
-- message may or may not have left.
CREATE TABLE ccip_send_intent (
  id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  request_id            uuid NOT NULL REFERENCES movement_requests ON DELETE CASCADE,
  node_id               uuid NOT NULL REFERENCES movement_request_nodes ON DELETE CASCADE,
  attempt_no            integer NOT NULL,
  source_chain_selector numeric(20, 0) NOT NULL CHECK (source_chain_selector >= 0),
  dest_chain_selector   numeric(20, 0) NOT NULL CHECK (dest_chain_selector >= 0),
  payload               jsonb NOT NULL DEFAULT '{}',
  status                text NOT NULL DEFAULT 'pending'
                        CHECK (status IN ('pending', 'resolved', 'stranded')),
  message_id            text,
  tx_hash               text,
  -- what the reaper found: the node's state, and whether it moved it to UNKNOWN
  reaped_node_state     text,
  node_sent_to_recovery boolean,
  created_at            timestamptz NOT NULL DEFAULT clock_timestamp(),
  resolved_at           timestamptz,
  stranded_at           timestamptz,
  UNIQUE (node_id, attempt_no)
);
-- Exactly the reaper's predicate: pending rows, oldest first.
CREATE INDEX ccip_send_intent_pending ON ccip_send_intent (created_at) WHERE status = 'pending';

-- An operator-level capital move (venue to venue), carried out by a linked
-- movement request. The follow-up worker settles stale pending rows from
-- the movement's verdict or raises operator attention once.
CREATE TABLE capital_transfer_requests (
  id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  network_class       text NOT NULL CHECK (network_class IN ('mainnet', 'testnet', 'devnet')),
  movement_request_id uuid REFERENCES movement_requests,
  from_venue          text NOT NULL,
  to_venue            text NOT NULL,
  asset               text NOT NULL,
  amount              numeric NOT NULL CHECK (amount > 0),
  requested_by        text NOT NULL,
  idempotency_key     text UNIQUE,
  status              text NOT NULL DEFAULT 'pending'
                      CHECK (status IN ('pending', 'completed', 'failed')),
  -- the linked movement's terminal state that settled the row
  resolution          text,
  attention_required  boolean NOT NULL DEFAULT false,
  attention_raised_at timestamptz,
  created_at          timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at          timestamptz NOT NULL DEFAULT clock_timestamp(),
  resolved_at         timestamptz
);
CREATE INDEX capital_transfer_requests_pending ON capital_transfer_requests (network_class, created_at)
  WHERE status = 'pending';

-- Deposits and withdrawals as a venue reports them, one row per venue
-- transfer id however often it is pulled. direction/asset/amount are
-- facts and never overwritten; status, tx hash and the raw item follow the
-- venue.
CREATE TABLE cex_transfers (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  venue             text NOT NULL,
  venue_transfer_id text NOT NULL,
  direction         text NOT NULL CHECK (direction IN ('deposit', 'withdrawal')),
  asset             text NOT NULL,
  amount            numeric NOT NULL CHECK (amount >= 0),
  status            text NOT NULL,
  tx_hash           text,
  network           text,
  address           text,
  occurred_at       timestamptz NOT NULL,
  raw               jsonb NOT NULL,
  first_seen_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (venue, venue_transfer_id)
);
CREATE INDEX cex_transfers_venue_occurred ON cex_transfers (venue, occurred_at);

-- Where the next pull of each venue starts, and how its pulls went.
CREATE TABLE cex_transfer_cursors (
  venue                text PRIMARY KEY,
  cursor               text,
  pulls_total          bigint NOT NULL DEFAULT 0,
  failures_total       bigint NOT NULL DEFAULT 0,
  consecutive_failures integer NOT NULL DEFAULT 0,
  last_error           text,
  last_success_at      timestamptz,
  last_failure_at      timestamptz,
  updated_at           timestamptz NOT NULL DEFAULT clock_timestamp()
);
