import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { agentTools, BUNDLED_TOOLS } from '../../src/commands/index.js';
import { buildBinary, runCli, spawnWith, testCli } from '../cli/fixtures/helpers.js';

// `clibroker conformance`: the report as data, the table, an author's own CLI from its
// manifest file, and the command kept out of what agents are offered.

const cli = testCli(BUNDLED_TOOLS);
const websocket = fileURLToPath(new URL('./fixtures/websocket.mjs', import.meta.url));
const manifest = JSON.stringify({
  id: 'fixtures',
  egress: ['api.github.com'],
  toolkits: { fixtures: { credential: 'auth.default' } },
  clis: [
    {
      id: 'streamer',
      binary: { image: 'plain', entrypoint: websocket },
      credentialEnv: ['X_TOKEN'],
      authScheme: 'token',
    },
  ],
});

t.test('the real binary: conformance --cli curl --format table prints the passing table', async (t) => {
  const { bin } = await buildBinary();
  t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));
  const r = spawnWith(bin, ['conformance', '--cli', 'curl', '--format', 'table']);
  t.equal(r.code, 0, r.stderr);
  const table = (r.env as { data: string }).data;
  t.match(table, /^curl: pass\n\n#\s+check\s+ok\s+code\s+evidence\n1\s+starts\s+ok\s/);
  t.match(
    table,
    /\n12\s+classification\s+ok\s+read command: GET \/user read; write command: POST \/repos\/acme\/app\/issues write/,
  );
});

t.test(
  "an author's CLI from --manifest-file and --probe: the report is data, the verdict its one reason",
  async (t) => {
    const r = await runCli(
      cli,
      [
        'conformance',
        '--cli',
        'streamer',
        '--manifest-file',
        'ext.json',
        '--probe',
        '{"read":["read"],"write":["write"]}',
      ],
      { files: { 'ext.json': manifest } },
    );
    t.equal(r.code, 0, r.stdout + r.stderr);
    const report = (
      r.env as {
        success: true;
        data: {
          cli: string;
          verdict: string;
          reason: string;
          checks: { name: string; ok: boolean; evidence: string }[];
        };
      }
    ).data;
    t.match(report, { cli: 'streamer', verdict: 'refused', reason: 'CONFORMANCE_WEBSOCKET' });
    t.match(
      report.checks.find((c) => !c.ok),
      { name: 'no-websocket', evidence: /CLI_UPGRADE_REFUSED/ },
    );
  },
);

t.test(
  'an unknown CLI without a manifest, or a manifest without the CLI or commands: refused before anything runs',
  async (t) => {
    const none = await runCli(cli, ['conformance', '--cli', 'mycli']);
    t.not(none.code, 0);
    t.match(none.env, {
      success: false,
      error: { type: 'missing-required', message: /knows no CLI 'mycli'.*--manifest-file/ },
    });
    const other = await runCli(cli, ['conformance', '--cli', 'mycli', '--manifest-file', 'ext.json'], {
      files: { 'ext.json': manifest },
    });
    t.match(other.env, {
      success: false,
      error: { message: /declares no CLI 'mycli'/, expected: 'streamer' },
    });
    const noProbe = await runCli(cli, ['conformance', '--cli', 'streamer', '--manifest-file', 'ext.json'], {
      files: { 'ext.json': manifest },
    });
    t.match(noProbe.env, {
      success: false,
      error: { type: 'missing-required', message: /--probe is needed for 'streamer'/ },
    });
  },
);

t.test('runConformance and the table come through the front door', async (t) => {
  const front = await import('../../src/index.js');
  const own = await import('../../src/conformance/index.js');
  t.equal(front.runConformance, own.runConformance);
  t.equal(front.conformanceTable, own.conformanceTable);
});

t.test('an operator command: agents are never offered it', async (t) => {
  t.ok(BUNDLED_TOOLS.some((x) => x.name === 'conformance'));
  t.notOk(agentTools().some((x) => x.name === 'conformance'));
});
