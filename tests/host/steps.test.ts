/**
 * The host's steps, each entered alone: which tools are offered and withheld, the strict
 * start, how a call names a tool, the run's input built from the configuration (the
 * connection handed over as a read), a resumed call's input, the broker's routing and the
 * host's own execution event.
 */
import t from 'tap';
import type { ConfiguredTool, InstalledExtension, WithheldTool } from '../../src/config/types.js';
import type { Connection } from '../../src/credentials/types.js';
import { hostEvent, resumedInput, runInputFor } from '../../src/host/calls.js';
import { brokerOptions } from '../../src/host/host.js';
import { findTool, offeredTools, refuseWithheldWhenStrict } from '../../src/host/tools.js';
import { githubExtension } from '../runs/fixtures.js';

const tool = (over: Partial<ConfiguredTool> & { profile?: 'plain' | 'isolated' } = {}): ConfiguredTool => {
  const { profile = 'isolated', ...rest } = over;
  return {
    id: 'github:cli:curl',
    name: 'curl_cli',
    extensionId: 'github',
    cliId: 'curl',
    description: 'curl',
    image: {
      name: 'plain',
      executable: '/usr/bin/curl',
      sha256: 'a'.repeat(64),
      profile,
      readOnlyPaths: ['/opt/curl'],
      verify: async () => {},
    },
    ...rest,
  };
};
const held = (code: string, name = 'gh_cli'): WithheldTool => ({
  id: `github:cli:${name}`,
  name,
  code,
  message: 'why',
});

t.test('tools offered here: plain only when allowed, isolated only where it can run', async (t) => {
  const plain = tool({ id: 'p', name: 'p_cli', profile: 'plain' });
  const isolated = tool({ id: 'i', name: 'i_cli' });
  const config = { tools: [plain, isolated], withheld: [held('CONFIG_X', 'x_cli')] };
  const cases: Record<string, [string | undefined, boolean, string[], string[]]> = {
    'isolation runs, plain allowed': [undefined, true, ['p', 'i'], ['CONFIG_X']],
    'isolation runs, plain not allowed': [
      undefined,
      false,
      ['i'],
      ['CONFIG_X', 'TOOL_VENDOR_CLI_PLAIN_NOT_ALLOWED'],
    ],
    'no bubblewrap': ['no bwrap', true, ['p'], ['CONFIG_X', 'TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE']],
  };
  t.plan(Object.keys(cases).length * 2);
  for (const [name, [why, allowPlainProfile, offered, withheld]] of Object.entries(cases)) {
    const got = await offeredTools(config, async () => why, { allowPlainProfile });
    t.same(
      got.offered.map((x) => x.id),
      offered,
      `${name}: offered`,
    );
    t.same(
      got.withheld.map((x) => x.code),
      withheld,
      `${name}: withheld`,
    );
  }
});

t.test('strict: a tool withheld refuses the start, a disabled toolkit does not', (t) => {
  const cases: Record<string, [boolean, WithheldTool[], boolean]> = {
    'not strict': [false, [held('TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE')], false],
    'strict, nothing withheld': [true, [], false],
    'strict, a disabled toolkit': [true, [held('TOOL_VENDOR_CLI_TOOLKIT_DISABLED')], false],
    'strict, a sandbox that cannot run': [true, [held('TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE')], true],
  };
  t.plan(Object.keys(cases).length);
  for (const [name, [strict, withheld, refused]] of Object.entries(cases)) {
    const run = () => refuseWithheldWhenStrict({ strict }, withheld);
    if (refused) t.throws(run, { code: 'CONFIG_INVALID' }, name);
    else t.doesNotThrow(run, name);
  }
});

t.test('a call names a tool by id or name; a withheld or unknown one is refused with why', (t) => {
  const curl = tool();
  const tools = {
    offered: [curl],
    withheld: [
      held('TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE', 'gh_cli'),
      held('TOOL_VENDOR_CLI_PLAIN_NOT_ALLOWED', 'az_cli'),
    ],
  };
  t.equal(findTool(tools, 'curl_cli'), curl, 'by name');
  t.equal(findTool(tools, 'github:cli:curl'), curl, 'by id');
  t.throws(() => findTool(tools, 'gh_cli'), {
    code: 'TOOL_VENDOR_CLI_SANDBOX_UNAVAILABLE',
    details: { tool: 'gh_cli' },
  });
  t.throws(() => findTool(tools, 'az_cli'), {
    code: 'TOOL_VENDOR_CLI_NOT_OFFERED',
    details: { tool: 'az_cli', reasonCode: 'TOOL_VENDOR_CLI_PLAIN_NOT_ALLOWED' },
  });
  t.throws(() => findTool(tools, 42), {
    code: 'TOOL_VENDOR_CLI_NOT_OFFERED',
    details: { tools: ['curl_cli'] },
  });
  t.end();
});

t.test(
  'the run’s input comes from the configuration; the connection goes as its kind and a read',
  async (t) => {
    const secret: Connection = {
      kind: 'oauth_access_token',
      accessToken: 'gho_ReadOnlyWhenTheCallStarts0001',
    };
    const reads: string[] = [];
    const config = {
      ceiling: 'write' as const,
      deadlineMs: 30_000,
      hiddenPaths: ['/etc/clibroker'],
      connection: async (id: string) => {
        reads.push(id);
        return secret;
      },
    };
    const ext: InstalledExtension = {
      id: 'github',
      manifest: githubExtension,
      sha256: 'b'.repeat(64),
      connection: { kind: 'oauth_access_token', accessToken: { file: '/etc/clibroker/gh.token' } } as never,
      identity: 'linked',
      assignment: 'default',
      endpoint: 'ghe.example.com',
    };
    const input = { args: ['-sS', 'https://api.github.com/user'], stdin: 'in' };
    const run = runInputFor(
      config,
      ext,
      tool(),
      input,
      { cliTier: 'write', context: 'chat', tierSource: 'serve.cliTier' },
      'read',
    );
    t.match(run, {
      cli: 'curl',
      args: input.args,
      stdin: 'in',
      endpoint: 'ghe.example.com',
      tier: {
        requested: 'write',
        requestedBy: 'serve.cliTier',
        organizationCeiling: 'write',
        assignmentAllow: 'read',
        identity: 'linked',
      },
      context: { kind: 'chat', tool: 'curl_cli', toolArgs: input },
      deadlineMs: 30_000,
      image: {
        name: 'plain',
        executable: '/usr/bin/curl',
        hiddenPaths: ['/etc/clibroker'],
        readOnlyPaths: ['/opt/curl'],
      },
    });
    t.not(run.context.toolArgs, input, 'the tool arguments are a copy');
    t.same(reads, [], 'no secret read while the input is built');
    const c = run.connection as { kind: string; read(): Promise<Connection> };
    t.equal(c.kind, 'oauth_access_token');
    t.equal(await c.read(), secret, 'the read goes to the configuration');
    t.same(reads, ['github'], 'for this extension, when read');
    t.end();
  },
);

t.test('a resumed call: the approval’s arguments are checked again', (t) => {
  t.same(resumedInput({ id: 'a1', toolArgs: { args: ['api', 'user'] } }), { args: ['api', 'user'] });
  t.throws(() => resumedInput({ id: 'a1', toolArgs: { args: ['x'], cliTier: 'write' } }), {
    code: 'APPROVAL_NOT_FOUND',
    details: { approvalId: 'a1' },
  });
  t.end();
});

t.test('the broker is routed as the configuration’s upstream says', (t) => {
  t.same(brokerOptions({}), { upstream: {} }, 'no upstream: nothing routed');
  const to = { host: '127.0.0.1', port: 8443 };
  const o = brokerOptions({
    upstream: { connectTo: new Map([['api.github.com', to]]), caPem: 'PEM', allowAddresses: ['127.0.0.0/8'] },
  } as never);
  t.match(o.upstream, { ca: 'PEM', allowAddresses: ['127.0.0.0/8'] });
  t.equal(o.upstream?.resolve?.('api.github.com'), to);
  t.end();
});

t.test('the host’s own event: the name asked for, redacted; never another extension', (t) => {
  const asked = 'gho_SecretShapedNameOfATool00000001';
  const e = hostEvent(
    asked,
    undefined,
    { tier: 'read', reason: 'not-resolved' },
    performance.now(),
    new Error('x'),
  );
  t.match(e, {
    type: 'extension.execution.failed',
    extensionId: '-',
    code: 'INTERNAL_ERROR',
    refusedBy: 'host',
    cliTier: 'read',
  });
  t.notMatch(e.cliId, asked, 'the secret-shaped name is redacted');
  const ok = hostEvent('curl_cli', tool(), { tier: 'read', reason: 'help-from-tree' }, performance.now());
  t.match(ok, { type: 'extension.execution.succeeded', extensionId: 'github', cliId: 'curl' });
  t.notOk('code' in ok || 'refusedBy' in ok);
  t.end();
});
