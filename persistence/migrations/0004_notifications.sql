-- Operator notifications (issue 5): facts an operator must hear about
-- (a request needing attention, a callback in the DLQ, a failed core group,
-- registry drift, a stale capital transfer). Written in the transaction of
-- the fact itself where there is one; one row per fact (dedupe_key), so a
-- worker that sees the same fact every pass does not page twice.
-- notification_dispatcher delivers them with the callback dispatcher's
-- retry discipline.
CREATE TABLE notification_outbox (
  id              bigserial PRIMARY KEY,
  kind            text NOT NULL,
  subject         text NOT NULL,
  dedupe_key      text NOT NULL UNIQUE,
  payload         jsonb NOT NULL DEFAULT '{}'::jsonb,
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'dlq')),
  attempts        int NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  last_error      text,
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  sent_at         timestamptz
);

CREATE INDEX notification_outbox_due ON notification_outbox (next_attempt_at, id)
  WHERE status = 'pending';
