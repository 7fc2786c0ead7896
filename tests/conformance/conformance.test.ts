import { fileURLToPath } from 'node:url';
import t from 'tap';
import {
  CHECKS,
  CONFORMANCE_CODES,
  type ConformanceReport,
  conformanceTable,
  knownConformance,
  mockVendor,
  runConformance,
} from '../../src/conformance/index.js';
import { CATALOGUE } from '../../src/errors.js';
import { defineExtension } from '../../src/manifest/define.js';
import { isolationUnavailable } from '../../src/sandbox/index.js';

// Real gh, curl and az, and small fixture programs that each break one rule, run through the
// real broker and sandbox against the embedded vendor. A fixture's verdict is its own reason.

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}.mjs`, import.meta.url));

/** The mock vendors' own credentials: they must never appear in a report. */
const SECRETS = ['gho_ConformanceMockVendorToken000001', 'ConformanceMockVendorSecret~0001'];

function assertNoSecret(t: { notOk(v: unknown, m: string): unknown }, r: ConformanceReport): void {
  const text = JSON.stringify(r) + conformanceTable(r);
  for (const s of SECRETS) t.notOk(text.includes(s), 'the report carries no credential');
}

async function known(id: string): Promise<ConformanceReport> {
  const k = knownConformance(id)!;
  return runConformance({ extension: k.extension, cli: id, probe: k.probe, ...mockVendor(k.vendor) });
}

t.test(
  'every check refuses with a catalogued CONFORMANCE_* code that says what the author can do',
  async (t) => {
    for (const code of CONFORMANCE_CODES) t.ok(CATALOGUE[code as keyof typeof CATALOGUE]?.remedy, code);
    t.same(
      new Set(CHECKS.map((c) => c.code)),
      new Set(CONFORMANCE_CODES),
      "the codes are exactly the checks' codes",
    );
    t.same(
      Object.keys(CATALOGUE)
        .filter((k) => k.startsWith('CONFORMANCE_'))
        .sort(),
      [...CONFORMANCE_CODES].sort(),
      'and every CONFORMANCE_* code in the catalogue is one',
    );
  },
);

for (const id of ['gh', 'curl', 'az']) {
  t.test(`real ${id} passes`, async (t) => {
    const r = await known(id);
    if (r.verdict !== 'pass') t.comment(conformanceTable(r));
    t.equal(r.verdict, 'pass');
    t.notOk(r.reason);
    t.same(
      r.checks.map((c) => c.name),
      CHECKS.map((c) => c.name),
      'every check, in order',
    );
    t.ok(r.checks.every((c) => c.ok));
    t.match(
      r.checks.find((c) => c.name === 'classification')!.evidence,
      id === 'az'
        ? /GET \/subscriptions\/[^ ]+\/resourcegroups read.*PUT [^ ]+\/resourcegroups\/rg2 write/
        : /GET \/user read; write command: POST \/repos\/acme\/app\/issues write/,
    );
    assertNoSecret(t, r);
  });
}

const noBwrap = await isolationUnavailable();
// The isolated child sees only the /etc allowlist: each real CLI must still start and reach the vendor.
for (const id of ['gh', 'curl', 'az']) {
  t.test(
    `real ${id} in the isolated profile passes: its own network namespace, the broker bridged in`,
    // In CI (.ci/run installs bubblewrap) a bwrap that does not work fails rather than skips.
    { skip: noBwrap && !process.env.CI ? `bubblewrap unavailable here: ${noBwrap}` : false },
    async (t) => {
      if (noBwrap) return void t.fail(`bubblewrap unavailable here: ${noBwrap}`);
      const k = knownConformance(id)!;
      const extension = defineExtension({
        ...k.extension,
        clis: k.extension.clis.map((c) => ({ ...c, binary: { ...c.binary, image: 'isolated' } })),
      });
      const r = await runConformance({ extension, cli: id, probe: k.probe, ...mockVendor(k.vendor) });
      if (r.verdict !== 'pass') t.comment(conformanceTable(r));
      t.equal(r.verdict, 'pass');
      t.match(r.checks[0]!.evidence, /in the isolated profile/);
      assertNoSecret(t, r);
    },
  );
}

function fixtureExtension(name: string, entrypoint = fixture(name)) {
  return defineExtension({
    id: 'fixtures',
    egress: ['api.github.com'],
    toolkits: { fixtures: { credential: 'auth.default' } },
    clis: [
      { id: name, binary: { image: 'plain', entrypoint }, credentialEnv: ['X_TOKEN'], authScheme: 'token' },
    ],
  });
}

async function runFixture(name: string, deadlineMs = 20_000): Promise<ConformanceReport> {
  return runConformance({
    extension: fixtureExtension(name),
    cli: name,
    probe: { read: ['read'], write: ['write'] },
    ...mockVendor('github'),
    deadlineMs,
  });
}

t.test(
  'a fixture that follows every rule passes (the fixtures fail for their one reason only)',
  async (t) => {
    const r = await runFixture('well-behaved');
    if (r.verdict !== 'pass') t.comment(conformanceTable(r));
    t.equal(r.verdict, 'pass');
  },
);

// fixture → [its reason, the check that decides, evidence]
const refused: Record<string, [string, string, RegExp]> = {
  prompts: [
    'CONFORMANCE_INTERACTIVE',
    'non-interactive',
    /still running after 3000 ms with stdin closed and no TTY/,
  ],
  'credentials-file': [
    'CONFORMANCE_CREDENTIAL_NOT_FROM_ENV',
    'credential-source',
    /before any request, asking for a stored sign-in: x: not logged in/,
  ],
  'ignores-proxy': ['CONFORMANCE_PROXY_IGNORED', 'uses-proxy', /not one CONNECT reached the broker/],
  'pinned-ca': [
    'CONFORMANCE_CA_NOT_TRUSTED',
    'trusts-session-ca',
    /TLS handshake for api\.github\.com (failed|finished but the client closed the tunnel without a request)/,
  ],
  'http2-only': [
    'CONFORMANCE_HTTP2_ONLY',
    'http1.1',
    /CONNECT api\.github\.com was refused with CLI_HTTP2_ONLY/,
  ],
  'port-8443': [
    'CONFORMANCE_NON_443',
    'port-443',
    /CONNECT api\.github\.com was refused with CLI_PORT_REFUSED/,
  ],
  sigv4: [
    'CONFORMANCE_REQUEST_SIGNING',
    'no-request-signing',
    /GET api\.github\.com\/user was refused with CLI_REQUEST_SIGNING_UNSUPPORTED/,
  ],
  websocket: ['CONFORMANCE_WEBSOCKET', 'no-websocket', /refused with CLI_UPGRADE_REFUSED/],
  'placeholder-in-query': [
    'CONFORMANCE_CREDENTIAL_NOT_FROM_ENV',
    'platform-credential',
    /placeholder reached the vendor in the query of GET api\.github\.com\/user/,
  ],
  'read-writes': [
    'CONFORMANCE_CLASSIFICATION',
    'classification',
    /read command: POST api\.github\.com\/repos\/acme\/app\/issues is classified write, not read/,
  ],
};

for (const [name, [reason, check, evidence]] of Object.entries(refused)) {
  t.test(`fixture ${name}: refused with ${reason}`, async (t) => {
    const r = await runFixture(name, name === 'prompts' ? 3000 : 20_000);
    if (r.reason !== reason) t.comment(conformanceTable(r));
    t.equal(r.verdict, 'refused');
    t.equal(r.reason, reason);
    const first = r.checks.findIndex((c) => !c.ok);
    t.equal(r.checks[first]!.name, check, 'the first failing check decides');
    t.match(r.checks[first]!.evidence, evidence);
    t.ok(
      r.checks.slice(0, first).every((c) => c.ok),
      'every earlier check passed',
    );
    t.equal(r.checks.length, CHECKS.length, 'later checks are still listed');
    assertNoSecret(t, r);
  });
}

t.test(
  'real curl told to trust only its own CA list: the handshake fails, CONFORMANCE_CA_NOT_TRUSTED',
  async (t) => {
    const k = knownConformance('curl')!;
    const r = await runConformance({
      extension: k.extension,
      cli: 'curl',
      probe: {
        read: ['-sS', '--cacert', '/etc/ssl/certs/ca-certificates.crt', 'https://api.github.com/user'],
      },
      ...mockVendor('github'),
    });
    t.equal(r.reason, 'CONFORMANCE_CA_NOT_TRUSTED');
    t.match(
      r.checks.find((c) => c.name === 'trusts-session-ca')!.evidence,
      /TLS handshake for api\.github\.com failed: .*(unknown ca|bad certificate|certificate)/i,
    );
  },
);

t.test('a CLI that cannot start: CONFORMANCE_PROBE_FAILED from the first check', async (t) => {
  const r = await runConformance({
    extension: fixtureExtension('missing', '/nonexistent/cli'),
    cli: 'missing',
    probe: { read: ['read'] },
    ...mockVendor('github'),
  });
  t.equal(r.reason, 'CONFORMANCE_PROBE_FAILED');
  t.equal(r.checks.find((c) => !c.ok)!.name, 'starts');
  t.match(r.checks[0]!.evidence, /read command did not start: CLI_SPAWN_FAILED/);
  t.ok(
    r.checks.slice(1).every((c) => c.notReached && /^not reached/.test(c.evidence)),
    'the later checks are listed as not reached',
  );
});

t.test('the table: the verdict, then one row per check, the deciding one marked FAIL', async (t) => {
  const r = await runFixture('port-8443');
  const table = conformanceTable(r);
  t.match(table, /^port-8443: refused \(CONFORMANCE_NON_443\)\n\n#\s+check\s+ok\s+code\s+evidence\n/);
  t.match(table, /\n8\s+port-443\s+FAIL\s+CONFORMANCE_NON_443\s+read command: CONNECT/);
  t.equal(table.split('\n').length, 3 + CHECKS.length);
});
