-- Registry drift (issue 5, reference §13 verify_drift and §14 ccip_drift).
--
-- registry_baselines: what an operator expects on chain — one contract per
-- (chain_id, address) with the Keccak-256 of its deployed code
-- (eth_getCode) — and what verify_drift last saw there.
-- registry_drift: every other drift subject, keyed by (source, subject):
-- 'evm_chain_id' / '<chain id>' (the endpoint of MG_EVM_RPC_URLS answers
-- another eth_chainId) and 'ccip' / '<sidecar item key>' (the CCIP sidecar's
-- own registry checks).
--
-- Both record the same life cycle: drift_state unverified → ok | drift, and
-- drift → ok again on recovery. drift_episode counts the times a subject
-- entered drift; the notification of an episode is keyed on it, so a drift
-- seen on every pass (or by two processes at once) pages once, and a
-- second drift after a recovery pages again.
CREATE TABLE registry_baselines (
  id                 bigserial PRIMARY KEY,
  chain_id           bigint NOT NULL CHECK (chain_id > 0),
  address            text NOT NULL CHECK (address ~ '^0x[0-9a-f]{40}$'),
  expected_code_hash text NOT NULL CHECK (expected_code_hash ~ '^0x[0-9a-f]{64}$'),
  label              text NOT NULL DEFAULT '',
  drift_state        text NOT NULL DEFAULT 'unverified'
                     CHECK (drift_state IN ('unverified', 'ok', 'drift')),
  observed_code_hash text,
  drift_episode      int NOT NULL DEFAULT 0,
  last_checked_at    timestamptz,
  last_verified_at   timestamptz, -- the last check that matched
  drift_detected_at  timestamptz, -- start of the current (or last) episode
  resolved_at        timestamptz, -- end of the last episode
  last_error         text,        -- the last check that could not decide (RPC down, timeout)
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  UNIQUE (chain_id, address)
);

CREATE TABLE registry_drift (
  source            text NOT NULL CHECK (source IN ('evm_chain_id', 'ccip')),
  subject           text NOT NULL,
  drift_state       text NOT NULL DEFAULT 'unverified'
                    CHECK (drift_state IN ('unverified', 'ok', 'drift')),
  expected          text NOT NULL DEFAULT '',
  observed          text NOT NULL DEFAULT '',
  detail            jsonb NOT NULL DEFAULT '{}'::jsonb,
  drift_episode     int NOT NULL DEFAULT 0,
  last_checked_at   timestamptz NOT NULL DEFAULT now(),
  drift_detected_at timestamptz,
  resolved_at       timestamptz,
  PRIMARY KEY (source, subject)
);

-- The notification dispatcher signs like the v3 callbacks: the timestamp is
-- the row's creation second, the nonce is fixed at enqueue, so every retry
-- is byte for byte the same delivery.
ALTER TABLE notification_outbox
  ADD COLUMN delivery_nonce text NOT NULL DEFAULT replace(gen_random_uuid()::text, '-', '');
