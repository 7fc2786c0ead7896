/**
 * The decide phase's one composition of the policy (src/broker/decide.ts): the pipeline's
 * default and the runs gate both decide through it, so a refusal is worded once. The table
 * pins what the default answers; the last test fails when any other module of src composes
 * the policy's answer into the engine's decision itself.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { decideRequest, defaultDecide } from '../../src/broker/decide.js';
import { errorMessage } from '../../src/errors.js';
import type { Classification, Tier } from '../../src/policy/index.js';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

const cls = (c: Classification['class']): Classification => ({ class: c, reason: `${c}-by-test` });

t.test('the default decide: reads pass, writes need tier write, destructive needs a person', async (t) => {
  const cases: Record<string, [Tier, Classification['class'], string, string | undefined]> = {
    'a read at tier read': ['read', 'read', 'allow', undefined],
    'a write at tier read': ['read', 'write', 'deny', 'CLI_REQUEST_TIER_DENIED'],
    'a write at tier write': ['write', 'write', 'allow', undefined],
    'a delete at tier read': ['read', 'destructive', 'deny', 'CLI_REQUEST_TIER_DENIED'],
    'a delete at tier write, no person to ask': ['write', 'destructive', 'deny', 'CLI_CONFIRMATION_REQUIRED'],
  };
  t.plan(Object.keys(cases).length * 2);
  for (const [name, [tier, c, decision, policyCode]] of Object.entries(cases)) {
    const d = defaultDecide(tier, cls(c));
    t.equal(d.decision, decision, name);
    t.equal(d.decision === 'deny' ? d.policyCode : undefined, policyCode, `${name}: the rule named`);
  }
});

t.test('a refusal is worded for the child, with what the caller knows beyond the rule', async (t) => {
  t.plan(4);
  const plain = defaultDecide('read', cls('write'));
  t.equal(plain.reason, errorMessage('CLI_REQUEST_TIER_DENIED', { class: 'write', reason: 'write-by-test' }));
  const worded = decideRequest({ class: 'write', tier: 'read', context: 'api' }, cls('write'), {
    tier: { reason: 'token-credential', source: 'caller' },
  });
  t.match(
    worded.verdict,
    { decision: 'deny', reason: 'tier-read-denies-write' },
    'the policy keeps its stable reason',
  );
  t.not(worded.decision.reason, plain.reason, 'the tier cap is named');
  const target = decideRequest(
    { class: 'destructive', tier: 'write', context: 'agent-step', reviewable: false },
    cls('destructive'),
    { target: 'not a plain path and query' },
  );
  t.equal(
    target.decision.reason,
    errorMessage('CLI_CONFIRMATION_UNREVIEWABLE', {
      class: 'destructive',
      reason: 'destructive-by-test',
      target: 'not a plain path and query',
    }),
    'an unreviewable target says so, not the body',
  );
});

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

t.test('only the decide phase composes the policy into the engine’s decision', async (t) => {
  // the policy's own folder defines the parts; the front doors re-export them
  const owners = new Set(['broker/decide.ts']);
  const composing = sources(SRC)
    .map((f) => relative(SRC, f))
    .filter((rel) => !rel.startsWith('policy/') && !owners.has(rel))
    .filter((rel) => /\b(?:toEngineDecision|refusalMessage)\s*\(/.test(readFileSync(join(SRC, rel), 'utf8')));
  t.same(composing, [], 'decide through decideRequest (src/broker/decide.ts) instead');
});
