-- EVM nonces and broadcast attempts (issue 8; the reaper is issue 5's).
--
-- A sender's nonces must be used in order and without gaps, and a nonce
-- whose signed transaction may still be mined must never carry another
-- transfer. One row per nonce a sender ever reserved:
--   reserved   held by an attempt (idempotency_key); nothing signed stored
--   broadcast  the attempt's signed bytes are stored (evm_tx_attempts) and
--              may be on chain; only the chain can release it
--   consumed   the chain shows the nonce used (by the attempt or a fence)
--   reclaimed  freed by evm_nonce_reaper: nothing was ever signed for it,
--              so the next reservation of this sender takes it first
--   fencing    a 0-value self-send at this nonce was broadcast (tx_hash),
--              so no earlier signed transaction can land here any more
CREATE TABLE evm_nonce_reservation (
  id              bigserial PRIMARY KEY,
  chain_id        bigint NOT NULL,
  address         text NOT NULL CHECK (address ~ '^0x[0-9a-f]{40}$'),
  nonce           bigint NOT NULL CHECK (nonce >= 0),
  state           text NOT NULL
                  CHECK (state IN ('reserved', 'broadcast', 'consumed', 'reclaimed', 'fencing')),
  idempotency_key text UNIQUE,
  node_id         uuid,
  attempt_no      int,
  tx_hash         text,
  reserved_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (chain_id, address, nonce)
);

CREATE INDEX evm_nonce_reservation_open ON evm_nonce_reservation (state, reserved_at)
  WHERE state IN ('reserved', 'broadcast', 'fencing');

-- The executor's own record of each attempt, written on its own connection
-- before anything is broadcast: recovery rebroadcasts exactly these bytes,
-- so it can only ever land the same transaction. A 'fenced' row (no bytes)
-- refuses a late submit of its key forever.
CREATE TABLE evm_tx_attempts (
  idempotency_key text PRIMARY KEY,
  node_id         uuid,
  attempt_no      int,
  chain_id        bigint,
  address         text,
  nonce           bigint,
  status          text NOT NULL CHECK (status IN ('signed', 'fenced')),
  signed_raw      bytea,
  tx_hash         text,
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  CHECK ((status = 'signed') = (signed_raw IS NOT NULL))
);
