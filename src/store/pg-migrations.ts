/**
 * The PostgreSQL schema, as numbered migrations with the same rule as SQLite's: append only;
 * a released migration is never edited or renumbered, and its checksum is checked on every
 * open. The tables mirror the SQLite ones column for column, so rows.ts maps both. The loop
 * that applies them is SQLite's too (migrate.ts); postgres.ts gives its statements.
 */
import type { Migration } from './migrate.js';

const V1_INITIAL = `
CREATE TABLE tier_assignments (
  extension_id  text NOT NULL,
  assignment_id text NOT NULL,
  allow         text NOT NULL CHECK (allow IN ('read', 'write')),
  updated_at    text NOT NULL,
  updated_by    text NOT NULL,
  PRIMARY KEY (extension_id, assignment_id)
);

CREATE TABLE approvals (
  -- creation order among approvals created in the same millisecond (SQLite uses its rowid)
  seq               bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  id                text PRIMARY KEY,
  run_id            text NOT NULL,
  digest            text NOT NULL CHECK (digest ~ '^[0-9a-f]{64}$'),
  method            text NOT NULL,
  host              text NOT NULL,
  path              text NOT NULL,
  graphql_operation text,
  body_preview      text,
  tool              text NOT NULL,
  -- text, not jsonb: read back exactly as written; the cast checks it is JSON
  tool_args         text NOT NULL CHECK (tool_args::json IS NOT NULL),
  status            text NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'consumed')),
  created_at        text NOT NULL,
  decided_at        text,
  decided_by        text,
  consumed_at       text,
  CHECK ((status = 'pending') = (decided_at IS NULL)),
  CHECK ((status = 'consumed') = (consumed_at IS NOT NULL))
);
CREATE INDEX approvals_status_run ON approvals (status, run_id);
CREATE INDEX approvals_run_digest ON approvals (run_id, digest, status);

-- Defence in depth: whoever issues the UPDATE, an approval moves forward only.
CREATE FUNCTION clibroker_approvals_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT ((OLD.status = 'pending' AND NEW.status IN ('approved', 'rejected'))
       OR (OLD.status = 'approved' AND NEW.status = 'consumed')) THEN
    RAISE EXCEPTION 'approval status transition not allowed' USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER approvals_transition BEFORE UPDATE OF status ON approvals
  FOR EACH ROW EXECUTE FUNCTION clibroker_approvals_transition();

CREATE TABLE audit_events (
  seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  type         text NOT NULL,
  time         text NOT NULL,
  time_ms      bigint NOT NULL,
  run_id       text,
  extension_id text,
  decision     text CHECK (decision IN ('allow', 'deny')),
  data         text NOT NULL CHECK (data::json IS NOT NULL)
);
CREATE INDEX audit_events_time ON audit_events (time_ms, seq);
CREATE INDEX audit_events_run ON audit_events (run_id, time_ms, seq);
CREATE INDEX audit_events_type ON audit_events (type, time_ms, seq);
CREATE INDEX audit_events_decision ON audit_events (decision, time_ms, seq) WHERE decision IS NOT NULL;

-- Append-only: no UPDATE, no TRUNCATE, and DELETE only of events older than the cutoff a
-- retention prune sets for its own transaction (clibroker.prune_before_ms, SET LOCAL).
CREATE FUNCTION clibroker_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  cutoff bigint := nullif(current_setting('clibroker.prune_before_ms', true), '')::bigint;
BEGIN
  IF TG_OP = 'DELETE' AND cutoff IS NOT NULL AND OLD.time_ms < cutoff THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit events are append-only' USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
  FOR EACH ROW EXECUTE FUNCTION clibroker_audit_append_only();
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
  FOR EACH STATEMENT EXECUTE FUNCTION clibroker_audit_append_only();
`;

/** Every PostgreSQL migration this build knows, in order. Append only. */
// As SQLite's second migration: a claimed approval whose request never reached the vendor
// goes back to approved (releaseApproval), the one backward step.
const V2_RELEASE = `
CREATE OR REPLACE FUNCTION clibroker_approvals_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT ((OLD.status = 'pending' AND NEW.status IN ('approved', 'rejected'))
       OR (OLD.status = 'approved' AND NEW.status = 'consumed')
       OR (OLD.status = 'consumed' AND NEW.status = 'approved')) THEN
    RAISE EXCEPTION 'approval status transition not allowed' USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
`;

// As SQLite's third: conformance verdicts, by the sha256 of the program tried.
const V3_CONFORMANCE = `
CREATE TABLE conformance_verdicts (
  seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  sha256     text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  image      text NOT NULL,
  executable text NOT NULL,
  verdict    text NOT NULL CHECK (verdict IN ('pass', 'refused')),
  code       text,
  tool       text,
  time       text NOT NULL,
  CHECK ((verdict = 'refused') = (code IS NOT NULL))
);
CREATE INDEX conformance_verdicts_sha256 ON conformance_verdicts (sha256, seq);
`;

// As SQLite's fourth: the allow switch per tool; switches stored per assignment are not
// carried (every tool starts at read again, the operator raises each one).
const V4_CLI_TIERS = `
CREATE TABLE cli_tiers (
  extension_id  text NOT NULL,
  assignment_id text NOT NULL,
  cli_id        text NOT NULL,
  allow         text NOT NULL CHECK (allow IN ('read', 'write')),
  updated_at    text NOT NULL,
  updated_by    text NOT NULL,
  PRIMARY KEY (extension_id, assignment_id, cli_id)
);
DROP TABLE tier_assignments;
`;

// As SQLite's fifth: a retention prune never deletes an event of a run with an open approval
// (pending, or approved and not yet consumed), whatever cutoff it sets.
const V5_RETENTION = `
CREATE OR REPLACE FUNCTION clibroker_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  cutoff bigint := nullif(current_setting('clibroker.prune_before_ms', true), '')::bigint;
BEGIN
  IF TG_OP = 'DELETE' AND cutoff IS NOT NULL AND OLD.time_ms < cutoff
     AND NOT EXISTS (SELECT 1 FROM approvals WHERE run_id = OLD.run_id AND status IN ('pending', 'approved')) THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit events are append-only' USING ERRCODE = 'insufficient_privilege';
END $$;
`;

// As SQLite's sixth: review sessions, the throttle's counters and the approvals' hold
// lease, shared by every serve replica. Epoch ms in bigint (the store reads them back as numbers).
// Rolling upgrade: additive only (two new tables and one nullable column; no existing
// function or trigger changes), so running replicas of the previous build keep serving while `clibroker store
// migrate` applies it and after: they never touch these tables, and their approve/reject
// (without NOTIFY) still work; watchers on new replicas hear those by polling. The ledger is
// marks it additive, so a replica of this build or later restarted on a database that has
// migrations it does not know opens it when every one of them is additive.
const V6_SERVE_SHARED = `
CREATE TABLE review_sessions (
  id        text PRIMARY KEY,
  seq       bigserial NOT NULL,
  who       text NOT NULL,
  issued_at bigint NOT NULL,
  last_seen bigint NOT NULL
);
ALTER TABLE approvals ADD COLUMN held_until text;
CREATE INDEX review_sessions_who ON review_sessions (who, issued_at);
CREATE INDEX review_sessions_issued ON review_sessions (issued_at);
CREATE INDEX review_sessions_seen ON review_sessions (last_seen);

CREATE TABLE serve_throttle (
  key          text PRIMARY KEY,
  window_start bigint NOT NULL,
  failures     bigint NOT NULL,
  last         bigint NOT NULL,
  locked_until bigint NOT NULL,
  strikes      bigint NOT NULL
);
`;

// As SQLite's seventh: the audit trail's hash chain, computed here by a BEFORE INSERT trigger
// so an append stays one autocommitted statement (one round trip). The trigger locks the one
// chain-head row (FOR UPDATE, held until the inserting transaction ends), so appends from any
// number of brokers are serialised into one chain; it assigns seq itself (head + 1, replacing
// the identity's value) so the chain's order is seq order even when transactions that drew
// identity values commit out of order. The encoding is chain.ts's, byte for byte: to_json
// escapes text as JSON.stringify does. Additive: the columns are nullable, and a previous
// build's INSERT (which names neither) is chained by the trigger like this build's.
const V7_AUDIT_CHAIN = `
ALTER TABLE audit_events ADD COLUMN prev_hash text, ADD COLUMN hash text;
CREATE TABLE audit_chain (
  id   integer PRIMARY KEY CHECK (id = 1),
  seq  bigint NOT NULL,
  hash text
);
INSERT INTO audit_chain (id, seq, hash) VALUES (1, coalesce((SELECT max(seq) FROM audit_events), 0), NULL);

CREATE FUNCTION clibroker_audit_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  head record;
BEGIN
  SELECT seq, hash INTO head FROM audit_chain WHERE id = 1 FOR UPDATE;
  NEW.seq := head.seq + 1;
  NEW.prev_hash := head.hash;
  NEW.hash := encode(sha256(convert_to(
    '{"data":' || to_json(NEW.data)::text ||
    ',"decision":' || coalesce(to_json(NEW.decision)::text, 'null') ||
    ',"extension_id":' || coalesce(to_json(NEW.extension_id)::text, 'null') ||
    ',"prev":' || coalesce(to_json(NEW.prev_hash)::text, 'null') ||
    ',"run_id":' || coalesce(to_json(NEW.run_id)::text, 'null') ||
    ',"seq":' || NEW.seq::text ||
    ',"time":' || to_json(NEW.time)::text ||
    ',"time_ms":' || NEW.time_ms::text ||
    ',"type":' || to_json(NEW.type)::text || '}', 'UTF8')), 'hex');
  UPDATE audit_chain SET seq = NEW.seq, hash = NEW.hash WHERE id = 1;
  RETURN NEW;
END $$;
CREATE TRIGGER audit_events_chain BEFORE INSERT ON audit_events
  FOR EACH ROW EXECUTE FUNCTION clibroker_audit_chain();
`;

export const PG_MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'initial', sql: V1_INITIAL },
  { version: 2, name: 'approval-release', sql: V2_RELEASE },
  { version: 3, name: 'conformance-verdicts', sql: V3_CONFORMANCE },
  { version: 4, name: 'cli-tiers', sql: V4_CLI_TIERS },
  { version: 5, name: 'retention', sql: V5_RETENTION },
  { version: 6, name: 'serve-shared-state', sql: V6_SERVE_SHARED, additive: true },
  { version: 7, name: 'audit-chain', sql: V7_AUDIT_CHAIN, additive: true },
];
