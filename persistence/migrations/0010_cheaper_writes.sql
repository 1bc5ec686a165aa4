-- Cheaper writes on the hot path.

-- HOT node updates. An UPDATE is HOT (no index writes) only when it changes
-- no column that any index names, in its keys or in a partial index's
-- predicate. nodes_recovery was keyed on updated_at, which every node
-- update sets, so no node update could be HOT. Recovery still orders its
-- candidates by updated_at (the reference's order); they are the few
-- SUBMITTING and UNKNOWN rows this index finds, sorted in memory. Its key
-- is claimed_at, which only the claim changes (together with node_state).
-- Updates that keep node_state, next_observe_at and claimed_by (a
-- preflight/prepare retry, a restarted escalation, a claim token handed
-- over, provider refs) are now HOT; those that move node_state are not and
-- cannot be while node_state picks the rows of the claim indexes.
DROP INDEX nodes_recovery;
CREATE INDEX nodes_recovery ON movement_request_nodes (claimed_at)
  WHERE node_state IN ('UNKNOWN', 'SUBMITTING');

-- Time-ordered ids (UUID version 7: 48 bits of Unix milliseconds, then
-- random bits) for the append-only tables: a new row's primary key lands
-- on the right edge of its index instead of on a random page, so inserts
-- touch (and write to WAL) a few hot pages instead of the whole index.
CREATE FUNCTION mg_uuid_v7() RETURNS uuid LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
  SELECT encode(
    set_bit(set_bit(
      overlay(uuid_send(gen_random_uuid())
              PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)
                                FROM 3)
              FROM 1 FOR 6),
      52, 1), 53, 1),
    'hex')::uuid
$$;

ALTER TABLE movement_events ALTER COLUMN id SET DEFAULT mg_uuid_v7();
ALTER TABLE node_artifacts ALTER COLUMN id SET DEFAULT mg_uuid_v7();
ALTER TABLE movement_callback_outbox ALTER COLUMN id SET DEFAULT mg_uuid_v7();
ALTER TABLE audit_outbox ALTER COLUMN id SET DEFAULT mg_uuid_v7();
