-- SPEC §1 "preflight/prepare errors": an executor exception in preflight or
-- prepare leaves the node READY and retries it after a per-node delay
-- (1 s doubling to 60 s); after MG_NODE_MAX_PREPARE_ERRORS in a row it
-- goes FAILED. prepare_errors counts the errors in a row (reset when the
-- node reaches SUBMITTING or an operator retries it); retry_at is when the
-- dispatcher may claim it again (NULL: at once).
ALTER TABLE movement_request_nodes
  ADD COLUMN prepare_errors integer NOT NULL DEFAULT 0,
  ADD COLUMN retry_at timestamptz;

-- The claim index stays nodes_dispatch_ready (READY, not manual_*, in FIFO
-- order): the claim's extra "retry_at IS NULL OR retry_at <= now" moves with
-- the clock, so no partial-index predicate can hold it; it filters the rows
-- the FIFO walk reads, and only nodes waiting out a retry are skipped.
