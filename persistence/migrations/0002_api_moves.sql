-- Movement calls of the /v3 API (SPEC §5).

-- sha256 of the canonical JSON of the create body: the same idempotency key
-- with another body is refused (409), with the same body deduplicated (200).
ALTER TABLE movement_requests ADD COLUMN create_body_hash text;

-- Keyset pagination of GET /v3/movements without a state filter (the
-- filtered list walks movement_requests_state_created).
CREATE INDEX movement_requests_created ON movement_requests (created_at, id);

-- The audit half of GET /v3/movements/{id}/events.
CREATE INDEX audit_outbox_subject ON audit_outbox (subject, occurred_at);
CREATE INDEX audit_events_subject ON audit_events (subject, occurred_at);
