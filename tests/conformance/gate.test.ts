/**
 * The conformance gate, as a table: what an image requires and what the store holds decide
 * whether its tools are offered. Fail closed: no verdict or a refusal withholds; a waiver or
 * a pass offers. A real in-memory store answers; it is asked once per sha256.
 */
import t from 'tap';
import { conformanceWithheld, type GatedTool } from '../../src/conformance/index.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { NewConformanceVerdict } from '../../src/store/types.js';

const SHA = 'c'.repeat(64);
const tool = (conformance?: 'required' | 'waived'): GatedTool => ({
  id: 'atlassian:cli:curl',
  name: 'curl_cli',
  image: { name: 'base', sha256: SHA, ...(conformance ? { conformance } : {}) },
});
const verdict = (over: Partial<NewConformanceVerdict>): NewConformanceVerdict => ({
  sha256: SHA,
  image: 'base',
  executable: '/usr/bin/curl',
  verdict: 'pass',
  ...over,
});

const cases: Record<
  string,
  { gate?: 'required' | 'waived'; recorded: NewConformanceVerdict[]; code?: string; says?: RegExp }
> = {
  'required, no verdict: unverified': {
    gate: 'required',
    recorded: [],
    code: 'TOOL_VENDOR_CLI_CONFORMANCE_UNVERIFIED',
    says: /image base \(sha256 cccccccccccc…\) has no conformance verdict in the store: run clibroker conformance --config/,
  },
  'required, refused: failed, with the refusal code': {
    gate: 'required',
    recorded: [verdict({ verdict: 'refused', code: 'CONFORMANCE_PROXY_IGNORED' })],
    code: 'TOOL_VENDOR_CLI_CONFORMANCE_FAILED',
    says: /refused by conformance at .*: CONFORMANCE_PROXY_IGNORED/,
  },
  'required, passed: offered': { gate: 'required', recorded: [verdict({})] },
  'required, a pass after a refusal: the latest decides': {
    gate: 'required',
    recorded: [verdict({ verdict: 'refused', code: 'CONFORMANCE_HTTP2_ONLY' }), verdict({})],
  },
  'required, a refusal after a pass: the latest decides': {
    gate: 'required',
    recorded: [verdict({}), verdict({ verdict: 'refused', code: 'CONFORMANCE_HTTP2_ONLY' })],
    code: 'TOOL_VENDOR_CLI_CONFORMANCE_FAILED',
  },
  'required, a pass for another program: unverified': {
    gate: 'required',
    recorded: [verdict({ sha256: 'd'.repeat(64) })],
    code: 'TOOL_VENDOR_CLI_CONFORMANCE_UNVERIFIED',
  },
  'waived, no verdict: offered': { gate: 'waived', recorded: [] },
  'waived, refused: offered (the operator decided)': {
    gate: 'waived',
    recorded: [verdict({ verdict: 'refused', code: 'CONFORMANCE_PROXY_IGNORED' })],
  },
  'not asked for: offered': { recorded: [] },
};

t.test('the gate', async (t) => {
  t.plan(Object.keys(cases).length);
  for (const [name, c] of Object.entries(cases)) {
    await t.test(name, async (t) => {
      const store = openSqliteStore(':memory:');
      t.teardown(() => store.close());
      for (const v of c.recorded) await store.recordConformance(v);
      const one = tool(c.gate);
      const r = await conformanceWithheld([one], store);
      if (c.code === undefined) {
        t.same(r, { offered: [one], withheld: [] });
        return;
      }
      t.same(r.offered, []);
      t.match(r.withheld, [
        { id: one.id, name: one.name, code: c.code, ...(c.says ? { message: c.says } : {}) },
      ]);
    });
  }
});

t.test('several tools of one image: the store is asked once', async (t) => {
  const store = openSqliteStore(':memory:');
  t.teardown(() => store.close());
  let asked = 0;
  const counting = {
    conformanceFor: (sha: string) => {
      asked++;
      return store.conformanceFor(sha);
    },
  };
  const tools = [
    tool('required'),
    { ...tool('required'), id: 'confluence:cli:curl', name: 'confluence__curl_cli' },
  ];
  const r = await conformanceWithheld(tools, counting);
  t.equal(asked, 1);
  t.same(
    r.withheld.map((w) => w.id),
    ['atlassian:cli:curl', 'confluence:cli:curl'],
  );
});
