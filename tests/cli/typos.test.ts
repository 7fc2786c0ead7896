import t from 'tap';
import { BUNDLED_TOOLS } from '../../src/commands/index.js';
import { TEST_TOOLS, runCli, testCli } from './fixtures/helpers.js';

const cli = testCli([...TEST_TOOLS, ...BUNDLED_TOOLS]);

// name → [argv, exit code, expected error fields (exact for the keys given)]
const typos: Record<string, [string[], number, Record<string, unknown>]> = {
  'topic typo keeps the trailing segment': [
    ['reviw', 'submit', '--pr', '1'],
    2,
    {
      type: 'unknown-command',
      got: 'reviw submit',
      expected:
        'review, vendor, approvals, audit, tiers, store, manifest, config, policy, agent, helptree, ping, run, resume, doctor, conformance, demo, daemon, serve',
      hint: "did you mean 'clibroker review submit'?",
    },
  ],
  'topic and subcommand typos are both corrected': [
    ['polcy', 'clasify'],
    2,
    { type: 'unknown-command', hint: "did you mean 'clibroker policy classify'?" },
  ],
  'topic typo alone names the topic and its commands': [
    ['polciy'],
    2,
    { type: 'unknown-command', hint: "did you mean 'clibroker policy'? It has: classify" },
  ],
  'far topic typo: no hint, still expected': [
    ['zzzzzz'],
    2,
    {
      type: 'unknown-command',
      hint: undefined,
      expected:
        'review, vendor, approvals, audit, tiers, store, manifest, config, policy, agent, helptree, ping, run, resume, doctor, conformance, demo, daemon, serve',
    },
  ],
  'known topic, subcommand typo': [
    ['review', 'sumbit'],
    2,
    {
      type: 'unknown-command',
      got: 'review sumbit',
      expected: 'submit',
      hint: "did you mean 'clibroker review submit'?",
    },
  ],
  'known topic, far subcommand': [
    ['policy', 'explain'],
    2,
    { type: 'unknown-command', expected: 'classify', hint: undefined },
  ],
  'known topic, no subcommand': [['agent'], 2, { type: 'unknown-command', expected: 'manifest' }],
  'top-level command typo': [
    ['pnig'],
    2,
    { type: 'unknown-command', hint: "did you mean 'clibroker ping'?" },
  ],
  'typo of a command alias suggests the canonical name': [
    ['ponh'],
    2,
    { type: 'unknown-command', hint: "did you mean 'clibroker ping'?" },
  ],
  'flag typo': [
    ['review', 'submit', '--evnet', 'APPROVE'],
    1,
    {
      type: 'unknown-flag',
      flag: 'evnet',
      hint: 'did you mean --event?',
      example: 'clibroker review submit --pr 42 --event APPROVE',
    },
  ],
  'flag alias typo suggests the canonical flag': [
    ['review', 'submit', '--lable', 'x'],
    1,
    { type: 'unknown-flag', hint: 'did you mean --labels?' },
  ],
  'file flag typo': [
    ['review', 'submit', '--body-fiel', 'x'],
    1,
    { type: 'unknown-flag', hint: 'did you mean --body-file?' },
  ],
  'negated boolean typo': [
    ['review', 'submit', '--no-darft'],
    1,
    { type: 'unknown-flag', hint: 'did you mean --no-draft?' },
  ],
  'bundled command flag typo': [
    ['policy', 'classify', '--metod', 'GET'],
    1,
    { type: 'unknown-flag', hint: 'did you mean --method?' },
  ],
  'the documented example: vendr run': [
    ['vendr', 'run'],
    2,
    { type: 'unknown-command', hint: "did you mean 'clibroker vendor run'?" },
  ],
  'approvals subcommand typo': [
    ['approvals', 'aprove', '--id', 'x'],
    2,
    {
      type: 'unknown-command',
      got: 'approvals aprove',
      expected: 'list, show, approve, reject',
      hint: "did you mean 'clibroker approvals approve'?",
    },
  ],
  'approvals alone lists its commands': [
    ['approvals'],
    2,
    { type: 'unknown-command', expected: 'list, show, approve, reject' },
  ],
  'audit topic and command typos': [
    ['audti', 'qeury'],
    2,
    { type: 'unknown-command', hint: "did you mean 'clibroker audit query'?" },
  ],
  'vendor run flag typo': [
    ['vendor', 'run', '--stdin-fiel', '-'],
    1,
    { type: 'unknown-flag', hint: 'did you mean --stdin-file?' },
  ],
  'a --connection flag does not exist (secrets never in argv)': [
    ['vendor', 'run', '--connection', '{}'],
    1,
    { type: 'unknown-flag', flag: 'connection', got: '--connection' },
  ],
  'enum value typo': [
    ['agent', 'manifest', '--format', 'opnai'],
    1,
    { type: 'enum-mismatch', flag: 'format', hint: "did you mean '--format openai'?" },
  ],
};

t.test('typos answer with the expected envelope and exit code', async (t) => {
  t.plan(Object.keys(typos).length * 3);
  for (const [name, [argv, code, want]] of Object.entries(typos)) {
    const r = await runCli(cli, argv);
    t.equal(r.code, code, `${name}: exit ${code}`);
    const err = r.env && !r.env.success ? (r.env.error as unknown as Record<string, unknown>) : {};
    const got: Record<string, unknown> = {};
    for (const k of Object.keys(want)) got[k] = err[k];
    t.same(got, want, name);
    t.equal(r.stderr.split('\n').filter(Boolean).length, 1, `${name}: one stderr line`);
  }
});
