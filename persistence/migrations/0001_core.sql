-- Core tables of SPEC §2 for the engine: templates, requests, nodes,
-- events, artifacts, callback outbox, heartbeats, the sim ledger.

CREATE TABLE templates (
  template_key  text NOT NULL,
  version       integer NOT NULL CHECK (version >= 1),
  graph_hash    text NOT NULL,
  plan          jsonb NOT NULL,
  risk_controls jsonb NOT NULL DEFAULT '{}',
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (template_key, version)
);

-- Normalised edges so get_successor_keys is an indexed lookup.
CREATE TABLE template_edges (
  template_key text NOT NULL,
  version      integer NOT NULL,
  from_key     text NOT NULL,
  to_key       text NOT NULL,
  PRIMARY KEY (template_key, version, from_key, to_key),
  FOREIGN KEY (template_key, version) REFERENCES templates ON DELETE CASCADE
);

CREATE TABLE template_proposals (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  template_key text NOT NULL,
  plan         jsonb NOT NULL,
  state        text NOT NULL DEFAULT 'pending'
               CHECK (state IN ('pending', 'approved', 'rejected', 'expired')),
  proposed_by  text NOT NULL,
  reviewed_by  text,
  expires_at   timestamptz NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX template_proposals_pending_expiry ON template_proposals (expires_at)
  WHERE state = 'pending';

CREATE TABLE movement_requests (
  id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  network_class      text NOT NULL CHECK (network_class IN ('mainnet', 'testnet', 'devnet')),
  template_key       text NOT NULL,
  template_version   integer NOT NULL,
  compiled_plan_hash text NOT NULL,
  intent             jsonb NOT NULL,
  input_params       jsonb NOT NULL DEFAULT '{}',
  request_state      text NOT NULL CHECK (request_state IN (
                       'PENDING_APPROVAL', 'APPROVED', 'EXECUTING', 'WAITING_MANUAL_ACTION',
                       'MANUAL_INTERVENTION', 'COMPLETED', 'FAILED', 'REJECTED', 'EXPIRED',
                       'CANCELLED')),
  approval_status    text NOT NULL DEFAULT 'pending'
                     CHECK (approval_status IN ('pending', 'approved', 'rejected')),
  approved_by        text,
  expires_at         timestamptz,
  current_frontier   text[] NOT NULL DEFAULT '{}',
  needs_reconcile    boolean NOT NULL DEFAULT false,
  -- when needs_reconcile last went true: the sweep leaves a live movement
  -- actor a moment to do its work first
  reconcile_requested_at timestamptz,
  dispatch_paused    boolean NOT NULL DEFAULT false,
  -- request_attention already sent for the current failure episode.
  attention_raised   boolean NOT NULL DEFAULT false,
  callback_url       text,
  idempotency_key    text NOT NULL UNIQUE,
  created_by         text NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
  FOREIGN KEY (template_key, template_version) REFERENCES templates (template_key, version)
) WITH (fillfactor = 80);
-- Requests the workers drive (the reconcile sweep walks these). No index
-- names the flags or updated_at, so flag updates stay HOT (no index writes).
CREATE INDEX movement_requests_active ON movement_requests (network_class, created_at)
  WHERE request_state IN ('APPROVED', 'EXECUTING', 'WAITING_MANUAL_ACTION');
CREATE INDEX movement_requests_state_created ON movement_requests (request_state, created_at, id);

CREATE TABLE movement_request_nodes (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  request_id       uuid NOT NULL REFERENCES movement_requests ON DELETE CASCADE,
  -- the request's created_at (immutable), so FIFO claims can walk an index
  -- of READY nodes in request order instead of every active request
  request_created_at timestamptz NOT NULL,
  position         integer NOT NULL,
  node_key         text NOT NULL,
  node_kind        text NOT NULL,
  action_type      text NOT NULL,
  executor_key     text NOT NULL,
  signer_key       text,
  side_effect      boolean NOT NULL DEFAULT false,
  signing_required boolean NOT NULL DEFAULT false,
  node_state       text NOT NULL CHECK (node_state IN (
                     'BLOCKED', 'READY', 'PREPARING', 'AWAITING_SIGNATURE', 'SUBMITTING',
                     'SUBMITTED', 'OBSERVING', 'COMPLETED', 'FAILED', 'UNKNOWN', 'SKIPPED',
                     'CANCELLED')),
  attempt_no       integer NOT NULL DEFAULT 0,
  idempotency_key  text,
  started_at       timestamptz,
  provider_state   text,
  provider_refs    jsonb NOT NULL DEFAULT '{}',
  provider_ref_id  text,
  next_observe_at  timestamptz,
  last_observed_at timestamptz,
  observe_count    integer NOT NULL DEFAULT 0,
  error_code       text,
  error_detail     text,
  claimed_by       text,
  claimed_at       timestamptz,
  claim_token      uuid,
  unknown_since    timestamptz,
  -- set when the node first reached SUBMITTING (cancel checks it)
  ever_submitted   boolean NOT NULL DEFAULT false,
  updated_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (request_id, node_key)
) WITH (fillfactor = 80);
-- Partial indexes matching the claim predicates exactly.
CREATE INDEX nodes_dispatch_ready ON movement_request_nodes (request_created_at, position)
  WHERE node_state = 'READY' AND action_type NOT LIKE 'manual\_%';
CREATE INDEX nodes_observe_due ON movement_request_nodes (next_observe_at, request_id)
  WHERE node_state IN ('SUBMITTED', 'OBSERVING');
CREATE INDEX nodes_recovery ON movement_request_nodes (updated_at)
  WHERE node_state IN ('UNKNOWN', 'SUBMITTING');
CREATE INDEX nodes_claimed_by ON movement_request_nodes (claimed_by)
  WHERE node_state IN ('SUBMITTING', 'SUBMITTED', 'OBSERVING');

CREATE TABLE movement_events (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq         bigserial NOT NULL,
  request_id  uuid NOT NULL REFERENCES movement_requests ON DELETE CASCADE,
  event_type  text NOT NULL,
  node_key    text,
  payload     jsonb NOT NULL,
  occurred_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX movement_events_request ON movement_events (request_id, seq);

CREATE TABLE node_artifacts (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  node_id      uuid NOT NULL REFERENCES movement_request_nodes ON DELETE CASCADE,
  attempt_no   integer NOT NULL,
  kind         text NOT NULL CHECK (kind IN ('prepared_action', 'sign_result', 'submit_proof',
                                             'observe_proof', 'recover_proof', 'generated')),
  payload      jsonb NOT NULL,
  payload_hash text,
  created_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX node_artifacts_node ON node_artifacts (node_id, attempt_no);

CREATE TABLE movement_callback_outbox (
  id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  event_id           uuid NOT NULL UNIQUE REFERENCES movement_events (id) ON DELETE CASCADE,
  request_id         uuid NOT NULL REFERENCES movement_requests ON DELETE CASCADE,
  event_type         text NOT NULL,
  payload            jsonb NOT NULL,
  callback_url       text NOT NULL,
  status             text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'dlq')),
  attempts           integer NOT NULL DEFAULT 0,
  max_attempts       integer NOT NULL DEFAULT 5,
  next_attempt_at    timestamptz,
  callback_timestamp bigint NOT NULL,
  callback_nonce     text NOT NULL,
  last_error         text,
  created_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
  sent_at            timestamptz
);
CREATE INDEX callback_outbox_pending ON movement_callback_outbox (created_at)
  WHERE status = 'pending';

CREATE TABLE audit_outbox (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  actor       text NOT NULL,
  action      text NOT NULL,
  subject     text NOT NULL,
  detail      jsonb NOT NULL DEFAULT '{}',
  occurred_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  promoted_at timestamptz
);
CREATE INDEX audit_outbox_unpromoted ON audit_outbox (occurred_at) WHERE promoted_at IS NULL;

CREATE TABLE audit_events (
  id          uuid PRIMARY KEY, -- the audit_outbox id: promotion is exactly once
  actor       text NOT NULL,
  action      text NOT NULL,
  subject     text NOT NULL,
  detail      jsonb NOT NULL DEFAULT '{}',
  occurred_at timestamptz NOT NULL
);

CREATE TABLE executors (
  executor_key           text NOT NULL,
  runtime_node           text NOT NULL,
  health_state           text NOT NULL DEFAULT 'unknown' CHECK (health_state IN ('up', 'down', 'unknown')),
  last_health_checked_at timestamptz,
  PRIMARY KEY (executor_key, runtime_node)
);

CREATE TABLE signers (
  signer_key              text NOT NULL,
  runtime_node            text NOT NULL,
  health_state            text NOT NULL DEFAULT 'unknown' CHECK (health_state IN ('up', 'down', 'unknown')),
  observed_signer_address text,
  status                  text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'orphan')),
  last_health_checked_at  timestamptz,
  PRIMARY KEY (signer_key, runtime_node)
);

CREATE TABLE signer_identities (
  signer_key              text PRIMARY KEY,
  expected_signer_address text
);

CREATE TABLE api_nonces (
  key_id  text NOT NULL,
  nonce   text NOT NULL,
  seen_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (key_id, nonce)
);
CREATE INDEX api_nonces_seen ON api_nonces (seen_at);

CREATE TABLE worker_heartbeats (
  worker_name        text NOT NULL,
  runtime_node       text NOT NULL,
  network_class      text NOT NULL,
  worker_group       text NOT NULL DEFAULT 'core',
  status             text NOT NULL DEFAULT 'starting',
  last_heartbeat_at  timestamptz NOT NULL DEFAULT now(),
  iterations         bigint NOT NULL DEFAULT 0,
  items_processed    bigint NOT NULL DEFAULT 0,
  consecutive_errors integer NOT NULL DEFAULT 0,
  last_error         text,
  UNIQUE (worker_name, runtime_node, network_class)
);

CREATE TABLE cluster_nodes (
  runtime_node text PRIMARY KEY,
  host         text NOT NULL,
  cluster_port integer,
  started_at   timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now()
);

-- The sim provider's own record, written on its own connection.
CREATE TABLE sim_ledger (
  idempotency_key text PRIMARY KEY,
  node_id         uuid NOT NULL,
  attempt_no      integer NOT NULL,
  action_type     text NOT NULL,
  fenced          boolean NOT NULL DEFAULT false,
  accepted_at     timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX sim_ledger_node ON sim_ledger (node_id);
