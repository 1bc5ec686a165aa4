-- Signed callbacks (SPEC §6): wake the callback dispatchers as soon as a
-- pending outbox row is committed, so the first attempt goes out at once.
-- One NOTIFY per inserting statement, and only when it inserted a row;
-- polling every MG_CALLBACK_DISPATCH_INTERVAL_SECONDS stays the safety net
-- (and the only mechanism with MG_WAKEUPS_ENABLED=false).
CREATE FUNCTION mg_notify_callback_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM inserted_rows WHERE status = 'pending') THEN
    PERFORM pg_notify('mg_callback', '');
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER movement_callback_outbox_notify
  AFTER INSERT ON movement_callback_outbox
  REFERENCING NEW TABLE AS inserted_rows
  FOR EACH STATEMENT EXECUTE FUNCTION mg_notify_callback_outbox();

-- The operator list (GET /admin/callbacks?status=…) walks one status in
-- (created_at, id) order.
CREATE INDEX callback_outbox_status_created ON movement_callback_outbox (status, created_at, id);
