-- Venue balances (issue 5, SPEC §2): balance_snapshot (worker) and
-- GET /v3/balances?fresh=true (API) append what the balance fetchers read;
-- rows are never updated, only deleted by retention
-- (MG_BALANCE_RETENTION_DAYS). Amounts are numeric, never floats.
CREATE TABLE balance_snapshots (
  id         bigserial PRIMARY KEY,
  venue_key  text NOT NULL CHECK (venue_key <> ''),
  asset      text NOT NULL CHECK (asset <> ''),
  amount     numeric NOT NULL CHECK (amount >= 0),
  fetched_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- The latest row per (venue_key, asset): GET /v3/balances and retention.
CREATE INDEX balance_snapshots_latest
  ON balance_snapshots (venue_key, asset, fetched_at DESC, id DESC);
-- Retention and the hourly rollup scan by time.
CREATE INDEX balance_snapshots_fetched_at ON balance_snapshots (fetched_at);

-- Hourly rollups (balance_history_rollup): one row per venue, asset and UTC
-- hour, recomputed from the snapshots of that hour; recomputing an
-- unchanged hour writes nothing.
CREATE TABLE balance_history (
  venue_key       text NOT NULL,
  asset           text NOT NULL,
  hour            timestamptz NOT NULL,
  min_amount      numeric NOT NULL,
  max_amount      numeric NOT NULL,
  last_amount     numeric NOT NULL,
  samples         int NOT NULL CHECK (samples > 0),
  last_fetched_at timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (venue_key, asset, hour)
);
