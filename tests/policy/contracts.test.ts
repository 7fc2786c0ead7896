/**
 * Contracts with the rest of the code base: the engine's types, the manifest's override
 * shape, and docs/policy.md naming every stable reason string the code can return.
 */
import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import type { Classification, Decision } from '../../src/broker/types.js';
import {
  type PolicyClassification,
  toEngineDecision,
  type WireOverride,
  type WireOverrideInput,
} from '../../src/policy/index.js';

// Compile-time: `npm run typecheck` fails if these drift apart.
const asEngine = (c: PolicyClassification): Classification => c;
const schemaToType = (o: WireOverrideInput): WireOverride => o;
const typeToSchema = (o: WireOverride): WireOverrideInput => o;
const decision: (d: Parameters<typeof toEngineDecision>[0]) => Decision = toEngineDecision;

t.test('type contracts hold (checked by tsc)', async (t) => {
  t.equal([asEngine, schemaToType, typeToSchema, decision].length, 4);
});

t.test('docs/policy.md names every reason string the policy code returns', async (t) => {
  const doc = readFileSync(new URL('../../docs/policy.md', import.meta.url), 'utf8');
  const dir = new URL('../../src/policy/', import.meta.url);
  const files = readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.ts'));
  const reasons = new Set<string>();
  const patterns = [
    /reason(?:: |\s*=\s*)'([a-z-]+)'/g,
    /(?:unparsed|fail|bad)\(\s*'([a-z-]+)'/g,
    /(?:fail|bad)\([^)]*\?\s*'([a-z-]+)'\s*:\s*'([a-z-]+)'/g,
    /deny\('[A-Z_]+', (?:cls === 'write' \? )?'([a-z-]+)'(?: : '([a-z-]+)')?/g,
    /\| '([a-z-]+)'/g,
    /\? '([a-z-]+)' : '([a-z-]+)'/g,
  ];
  for (const f of files) {
    const src = readFileSync(new URL(f, dir), 'utf8');
    for (const re of patterns)
      for (const m of src.matchAll(re)) for (const g of m.slice(1)) if (g) reasons.add(g);
  }
  const notReasons = new Set([
    'read',
    'write',
    'destructive',
    'query',
    'mutation',
    'subscription',
    'fragment',
    'assigned',
    'linked',
    'allow',
    'deny',
    'needs-approval',
    // the outcome an allowed decision is settled with (sent | not_sent | unknown), not a reason
    'unknown',
  ]);
  const list = [...reasons].filter((r) => !notReasons.has(r)).sort();
  t.ok(list.length > 40, `found ${list.length} reason strings in src/policy`);
  for (const r of list)
    t.ok(
      doc.includes(`\`${r}\``) || doc.includes(`\`${r.replace(/-in-.*/, '-in-<context>')}\``),
      `docs/policy.md names \`${r}\``,
    );
});
