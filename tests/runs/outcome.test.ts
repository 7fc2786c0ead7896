/** The result precedence as a table: refusals in request order × how the CLI ended. */
import t from 'tap';
import {
  callRefusal,
  outcomeUnknown,
  refusalWeight,
  runOutcome,
  type OutcomeInput,
} from '../../src/runs/outcome.js';
import type { RefusedRequest } from '../../src/runs/types.js';
import { type FoldedRequest, RefusalFold } from '../../src/broker/fold.js';
import type { AuditEvent } from '../../src/broker/types.js';
import { rng } from '../helpers/rng.js';

const refused = (code: string, policyCode?: string): RefusedRequest => ({
  code,
  ...(policyCode ? { policyCode } : {}),
  message: code,
  method: 'GET',
  host: 'h.example.com',
  path: '/',
});
const TIER = refused('POLICY_BLOCKED', 'CLI_REQUEST_TIER_DENIED');
const PENDING = refused('POLICY_BLOCKED', 'CLI_APPROVAL_PENDING');
const AFTER_WRITE = refused('POLICY_BLOCKED', 'CLI_CONFIRMATION_AFTER_WRITE');
const EGRESS = refused('POLICY_BLOCKED', 'CLI_EGRESS_HOST_DENIED');
const UPSTREAM = refused('UPSTREAM_UNAVAILABLE');
const CLOSED = refused('CLI_SESSION_CLOSED');
const UPLOAD = refused('CLI_UPLOAD_TOO_LARGE');
const MINT = refused('CREDENTIAL_TOKEN_MINT_FAILED');
const BAD = refused('CLI_BAD_REQUEST');

const exited = (
  exitCode: number,
  refusals: RefusedRequest[] = [],
  more: Partial<OutcomeInput> = {},
): OutcomeInput => ({ refusals, pending: false, exitCode, timedOut: false, ...more });
const signalled = (refusals: RefusedRequest[] = [], more: Partial<OutcomeInput> = {}): OutcomeInput =>
  exited(0, refusals, { exitCode: null, ...more });

const cases: Record<string, [OutcomeInput, ReturnType<typeof runOutcome>]> = {
  'nothing refused, exit 0': [exited(0), { status: 'completed' }],
  'nothing refused, exit 3: a non-zero exit is data': [exited(3), { status: 'completed' }],
  'a tier denial, exit 0 (curl without -f)': [exited(0, [TIER]), { status: 'refused', refusal: TIER }],
  'an oversized upload, exit 0': [exited(0, [UPLOAD]), { status: 'refused', refusal: UPLOAD }],
  'a failed token mint, exit 0': [exited(0, [MINT]), { status: 'refused', refusal: MINT }],
  'a code this build does not know fails closed': [
    exited(0, [refused('CLI_SOMETHING_NEW')]),
    { status: 'refused', refusal: refused('CLI_SOMETHING_NEW') },
  ],
  'a host outside egress, exit 0: outlived': [exited(0, [EGRESS]), { status: 'completed' }],
  'a host outside egress, exit 1: reported': [exited(1, [EGRESS]), { status: 'refused', refusal: EGRESS }],
  'egress then a tier denial: the first policy refusal': [
    exited(0, [EGRESS, TIER, UPLOAD]),
    { status: 'refused', refusal: TIER },
  ],
  // a confirmation rule reaches the caller as its own code, not POLICY_BLOCKED + policyCode
  'two policy refusals: the first': [
    exited(1, [AFTER_WRITE, TIER]),
    {
      status: 'refused',
      refusal: { ...refused('CLI_CONFIRMATION_AFTER_WRITE'), message: AFTER_WRITE.message },
    },
  ],
  'the pending approval first: paused': [
    exited(1, [EGRESS, PENDING, TIER], { pending: true }),
    { status: 'paused', refusal: PENDING },
  ],
  'a tier denial before the pending approval: refused, no approval': [
    exited(1, [TIER, PENDING], { pending: true }),
    { status: 'refused', refusal: TIER },
  ],
  'an upstream failure the CLI retried past: completed': [exited(0, [UPSTREAM]), { status: 'completed' }],
  'an upstream failure, the CLI failed: reported before a blocked phone-home': [
    exited(1, [EGRESS, UPSTREAM]),
    { status: 'refused', refusal: UPSTREAM },
  ],
  'timed out with a request cut off in flight': [
    signalled([UPSTREAM, CLOSED], { timedOut: true, exitCode: null }),
    { status: 'timed_out', code: 'CLI_TIMEOUT' },
  ],
  'timed out after a tier denial: the refusal, which the kill did not cause': [
    signalled([TIER, UPSTREAM], { timedOut: true }),
    { status: 'refused', refusal: TIER },
  ],
  'killed by a signal between two requests': [
    signalled(),
    { status: 'failed', code: 'CLI_EXITED_BY_SIGNAL' },
  ],
  'killed by a signal with a request cut off': [
    signalled([UPSTREAM]),
    { status: 'failed', code: 'CLI_EXITED_BY_SIGNAL' },
  ],
  'killed by a signal after a blocked phone-home': [
    signalled([EGRESS]),
    { status: 'failed', code: 'CLI_EXITED_BY_SIGNAL' },
  ],
  'killed by a signal after a tier denial': [signalled([TIER]), { status: 'refused', refusal: TIER }],
  'timed out with an upload cut short (unparseable at EOF)': [
    signalled([BAD, UPSTREAM], { timedOut: true }),
    { status: 'timed_out', code: 'CLI_TIMEOUT' },
  ],
  'killed by a signal with an upload cut short': [
    signalled([BAD]),
    { status: 'failed', code: 'CLI_EXITED_BY_SIGNAL' },
  ],
  'a malformed request the CLI survived (exit 0)': [exited(0, [BAD]), { status: 'refused', refusal: BAD }],
  'an idle connection that never sent a head, the CLI succeeded': [
    exited(0, [refused('CLI_REQUEST_HEAD_TIMEOUT')]),
    { status: 'completed' },
  ],
};

t.plan(Object.keys(cases).length + 4);
for (const [name, [input, want]] of Object.entries(cases)) t.same(runOutcome(input), want, name);

t.test('weights: only egress is outlivable; upstream- and broker-side codes are incidental', async (t) => {
  t.equal(refusalWeight(EGRESS), 'outlivable');
  t.equal(refusalWeight(refused('CLI_EGRESS_HOST_DENIED')), 'outlivable', 'as a code too');
  for (const r of [
    UPSTREAM,
    CLOSED,
    refused('UPSTREAM_TIMEOUT'),
    refused('INTERNAL_ERROR'),
    refused('CLI_TLS_HANDSHAKE_TIMEOUT'),
    refused('CLI_REQUEST_HEAD_TIMEOUT'),
  ])
    t.equal(refusalWeight(r), 'incidental', r.code);
  t.equal(refusalWeight(BAD), 'policy', 'an unparseable request after a normal exit');
  t.equal(refusalWeight(BAD, true), 'incidental', 'an unparseable request when the CLI was killed');
  for (const r of [
    TIER,
    PENDING,
    AFTER_WRITE,
    UPLOAD,
    MINT,
    refused('CLI_REQUEST_BUDGET_EXCEEDED'),
    refused('CLI_UPGRADE_REFUSED'),
    refused('CLI_TRACE_REFUSED'),
    refused('POLICY_BLOCKED', 'CLI_EGRESS_ADDRESS_DENIED'),
  ]) {
    t.equal(refusalWeight(r), 'policy', r.policyCode ?? r.code);
  }
});

t.test(
  'the call fails with a confirmation rule as its own code; tier and egress stay POLICY_BLOCKED',
  async (t) => {
    for (const code of [
      'CLI_CONFIRMATION_REQUIRED',
      'CLI_CONFIRMATION_NOT_APPROVABLE',
      'CLI_CONFIRMATION_AFTER_WRITE',
      'CLI_CONFIRMATION_UNREVIEWABLE',
      'EXEC_ACTION_CONFIRMATION_DECLINED',
    ]) {
      const r = callRefusal(refused('POLICY_BLOCKED', code));
      t.equal(r.code, code, code);
      t.notOk('policyCode' in r, `${code}: no policyCode left behind`);
    }
    for (const kept of [TIER, EGRESS, refused('POLICY_BLOCKED', 'CLI_EGRESS_ADDRESS_DENIED'), UPLOAD])
      t.same(callRefusal(kept), kept, kept.policyCode ?? kept.code);
  },
);

t.test('an unknown outcome: unknown writes, a tier denial, or a failure after a write', async (t) => {
  const none = { unknownOutcomes: [], writesSent: 0 };
  t.equal(outcomeUnknown({ status: 'refused', refusal: TIER }, none), true, 'a tier denial');
  t.equal(outcomeUnknown({ status: 'refused', refusal: UPLOAD }, none), false, 'refused before any write');
  t.equal(
    outcomeUnknown({ status: 'refused', refusal: UPLOAD }, { ...none, writesSent: 1 }),
    true,
    'refused after a write',
  );
  t.equal(
    outcomeUnknown({ status: 'timed_out', code: 'CLI_TIMEOUT' }, { ...none, writesSent: 2 }),
    true,
    'killed after a write',
  );
  t.equal(
    outcomeUnknown({ status: 'timed_out', code: 'CLI_TIMEOUT' }, none),
    false,
    'killed before any write',
  );
  t.equal(
    outcomeUnknown({ status: 'completed' }, { ...none, writesSent: 3 }),
    false,
    'completed writes are known',
  );
  t.equal(
    outcomeUnknown({ status: 'refused', refusal: AFTER_WRITE }, { unknownOutcomes: [{}], writesSent: 1 }),
    true,
    'writes the refusal left unknown',
  );
});

/**
 * The broker's fold as the runner sees it: the refusals written one by one, in order, then one
 * entry per folded code with its count.
 */
function foldedAs(refusals: readonly RefusedRequest[]): RefusedRequest[] {
  const fold = new RefusalFold();
  const out: RefusedRequest[] = [];
  const firsts = new Map<string, RefusedRequest>();
  for (const r of refusals) {
    const x: FoldedRequest = { started: false, start: performance.now(), bytesUp: 0, bytesDown: 0 };
    if (!fold.fold(x, r.code, r.policyCode, () => ({}) as AuditEvent)) out.push(r);
    else if (!firsts.has(r.code)) firsts.set(r.code, r);
  }
  for (const [code, c] of fold.take()) out.push({ ...firsts.get(code)!, folded: c.folded });
  return out;
}

t.test('folding never changes the outcome: random refusal sequences, every way a CLI ends', async (t) => {
  const pool = [TIER, PENDING, AFTER_WRITE, EGRESS, UPSTREAM, CLOSED, UPLOAD, MINT, BAD];
  // the repeatable child-side codes a hostile child floods with
  for (const code of [
    'CLI_REQUEST_BUDGET_EXCEEDED',
    'CLI_TUNNEL_LIMIT_EXCEEDED',
    'CLI_REQUEST_HEAD_TIMEOUT',
    'CLI_TLS_HANDSHAKE_TIMEOUT',
    'CLI_PLAIN_HTTP_REFUSED',
    'CLI_UPGRADE_REFUSED',
    'CLI_HOST_MISMATCH',
    'CLI_HEADERS_TOO_LARGE',
    'CLI_PORT_REFUSED',
    'CLI_HOST_INVALID',
  ])
    pool.push(refused(code));
  const endings: Record<string, Partial<OutcomeInput>> = {
    'exit 0': { exitCode: 0 },
    'exit 1': { exitCode: 1 },
    signal: { exitCode: null },
    deadline: { exitCode: null, timedOut: true },
    'exit 0, approval pending': { exitCode: 0, pending: true },
  };
  const next = rng(20261206);
  let folds = 0;
  for (let i = 0; i < 300; i++) {
    // mostly one code in floods, with decisions scattered among them
    const length = Math.floor(next() * 400);
    const seq: RefusedRequest[] = [];
    let flood = pool[Math.floor(next() * pool.length)]!;
    for (let j = 0; j < length; j++) {
      if (next() < 0.05) flood = pool[Math.floor(next() * pool.length)]!;
      seq.push(next() < 0.9 ? flood : pool[Math.floor(next() * pool.length)]!);
    }
    const folded = foldedAs(seq);
    if (folded.length < seq.length) folds++;
    t.equal(
      folded.reduce((n, r) => n + (r.folded ?? 1), 0),
      seq.length,
      `sequence ${i}: every refusal counted`,
    );
    for (const [name, more] of Object.entries(endings)) {
      const input = { refusals: seq, pending: false, exitCode: 0, timedOut: false, ...more };
      const a = runOutcome(input);
      const b = runOutcome({ ...input, refusals: folded });
      const strip = (o: ReturnType<typeof runOutcome>): unknown =>
        'refusal' in o ? { ...o, refusal: { ...o.refusal, folded: undefined } } : o;
      if (JSON.stringify(strip(a)) !== JSON.stringify(strip(b)))
        t.fail(`sequence ${i}, ${name}: ${JSON.stringify(a)} became ${JSON.stringify(b)}`);
      else if ('refusal' in b && b.refusal.folded !== undefined)
        t.fail(`sequence ${i}, ${name}: a summary decided the call`);
    }
  }
  t.ok(folds > 100, `${folds} of 300 sequences were folded`);
});
