-- Who holds a runtime name (SPEC §8 "Restart under its own name"): a
-- process restarted under its name within the lease can then tell a
-- crashed holder (same machine, boot and pid namespace; no process with
-- that pid and start time) from a live one or one it cannot see. Rows
-- written before this migration have no identity: their lease is waited out.
ALTER TABLE cluster_nodes
  ADD COLUMN holder_machine_id    text,
  ADD COLUMN holder_boot_id       text,
  ADD COLUMN holder_pid_namespace bigint,
  ADD COLUMN holder_pid           bigint,
  ADD COLUMN holder_start_time    bigint;
