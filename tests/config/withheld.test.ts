/**
 * A configuration degrades per tool: a CLI with a problem of its own is withheld (its code
 * and message in `withheld`) and the rest is offered; `strict` refuses the whole load
 * instead. Two extensions shipping a CLI with the same id are both offered, under names
 * qualified by their extension, whatever order they are installed in.
 */
import t from 'tap';
import { loadConfig } from '../../src/config/index.js';
import type { ConfigProblem } from '../../src/config/index.js';
import { atlassianExtension } from '../manifest/fixtures.js';
import { type Fixture, makeFixture, rejection } from './fixtures.js';

/** Install atlassian's curl CLI again under another extension id. */
function secondCurl(f: Fixture, id: string, cliId = 'curl'): void {
  const m = atlassianExtension();
  m.id = id;
  m.clis[0]!.id = cliId;
  m.clis[0]!.binary.entrypoint = 'curl';
  f.putManifest(id, m);
  f.config.extensions[id].connection = { kind: 'basic', username: 'bot', password: { env: 'GH_SECRET' } };
}

const names = (c: { tools: readonly { id: string; name: string }[] }) => c.tools.map((x) => [x.id, x.name]);

t.test('one CLI every call would refuse is withheld; the others are offered', async (t) => {
  const f = makeFixture(t);
  // scopes with a connection that is not an application identity: IDENTITY_NOT_CONFIGURED
  f.config.extensions.azure.connection = { kind: 'api_key', apiKey: { env: 'GH_SECRET' } };
  const c = await loadConfig(f.write(), { env: f.env });
  t.same(names(c), [
    ['github:cli:gh', 'gh_cli'],
    ['atlassian:cli:curl', 'curl_cli'],
  ]);
  t.equal(c.withheld.length, 1);
  t.match(c.withheld[0], {
    id: 'azure:cli:az',
    name: 'az_cli',
    code: 'CONFIG_CLI_NOT_RUNNABLE',
    path: 'extensions.azure.manifest.clis[0]',
    message: /the broker would refuse every call of az: IDENTITY_NOT_CONFIGURED/,
  });
  t.equal(c.strict, false);
  t.ok(c.extensions.has('azure'), 'the extension is still installed: its connection is still resolvable');
});

t.test('strict: the same configuration is refused whole', async (t) => {
  const f = makeFixture(t);
  f.config.extensions.azure.connection = { kind: 'api_key', apiKey: { env: 'GH_SECRET' } };
  f.config.strict = true;
  const e = await rejection(loadConfig(f.write(), { env: f.env }));
  t.equal(e.code, 'CONFIG_INVALID');
  t.same(
    ((e.details?.['problems'] ?? []) as ConfigProblem[]).map((p) => `${p.code} ${p.path}`),
    ['CONFIG_CLI_NOT_RUNNABLE extensions.azure.manifest.clis[0]'],
  );
  const g = makeFixture(t);
  g.config.strict = 'yes';
  const shape = await rejection(loadConfig(g.write(), { env: g.env }));
  t.match(shape.details, { problems: [{ code: 'CONFIG_FIELD_INVALID', path: 'strict' }] });
});

t.test('a problem of the whole configuration still refuses it, listing the withheld ones too', async (t) => {
  const f = makeFixture(t);
  f.config.extensions.azure.connection = { kind: 'api_key', apiKey: { env: 'GH_SECRET' } };
  f.config.deadlineSeconds = 0;
  const e = await rejection(loadConfig(f.write(), { env: f.env }));
  t.same(((e.details?.['problems'] ?? []) as ConfigProblem[]).map((p) => `${p.code} ${p.path}`).sort(), [
    'CONFIG_CLI_NOT_RUNNABLE extensions.azure.manifest.clis[0]',
    'CONFIG_FIELD_INVALID deadlineSeconds',
  ]);
});

t.test('two extensions with a curl CLI: both offered, each qualified by its extension', async (t) => {
  const f = makeFixture(t);
  secondCurl(f, 'confluence');
  const c = await loadConfig(f.write(), { env: f.env });
  t.same(names(c), [
    ['github:cli:gh', 'gh_cli'],
    ['azure:cli:az', 'az_cli'],
    ['atlassian:cli:curl', 'atlassian__curl_cli'],
    ['confluence:cli:curl', 'confluence__curl_cli'],
  ]);
  t.same(c.withheld, []);
  for (const x of c.tools) t.match(x.name, /^[a-zA-Z0-9_-]{1,64}$/, `${x.name} is a name MCP clients accept`);

  // installed the other way round: the same names
  const reordered = makeFixture(t);
  const { atlassian, ...rest } = reordered.config.extensions;
  secondCurl(reordered, 'confluence');
  reordered.config.extensions = { confluence: reordered.config.extensions.confluence, ...rest, atlassian };
  const again = await loadConfig(reordered.write(), { env: reordered.env });
  t.same(names(again).sort(), names(c).sort(), 'the names do not depend on the order of installation');

  f.config.strict = true;
  const e = await rejection(loadConfig(f.write(), { env: f.env }));
  t.match(e.details, {
    problems: [
      {
        code: 'CONFIG_TOOL_NAME_CONFLICT',
        path: 'extensions.confluence.manifest.clis[0].id',
        message: /curl_cli is already offered by atlassian:cli:curl/,
      },
    ],
  });
});

t.test('a qualified name over 64 characters, or one another CLI has, is withheld', async (t) => {
  const f = makeFixture(t);
  const longExt = `e${'x'.repeat(31)}`;
  const longCli = `c${'y'.repeat(31)}`;
  secondCurl(f, 'confluence');
  secondCurl(f, 'wiki', longCli);
  secondCurl(f, longExt, longCli);
  // its own id is unique, so it is not qualified: but it is what atlassian's curl is qualified as
  secondCurl(f, 'jira', 'atlassian__curl');
  const c = await loadConfig(f.write(), { env: f.env });
  t.same(names(c), [
    ['github:cli:gh', 'gh_cli'],
    ['azure:cli:az', 'az_cli'],
    ['confluence:cli:curl', 'confluence__curl_cli'],
    [`wiki:cli:${longCli}`, `wiki__${longCli}_cli`],
  ]);
  t.same(
    c.withheld.map((w) => [w.id, w.name, w.code]),
    [
      ['atlassian:cli:curl', 'atlassian__curl_cli', 'CONFIG_TOOL_NAME_CONFLICT'],
      [`${longExt}:cli:${longCli}`, `${longExt}__${longCli}_cli`, 'CONFIG_TOOL_NAME_CONFLICT'],
      ['jira:cli:atlassian__curl', 'atlassian__curl_cli', 'CONFIG_TOOL_NAME_CONFLICT'],
    ],
  );
  t.match(c.withheld[0]!.message, /atlassian__curl_cli is also that of jira:cli:atlassian__curl/);
  t.match(c.withheld[1]!.message, /over 64 characters/);
  t.match(c.withheld[1]!.path, new RegExp(`^extensions\\.${longExt}\\.manifest\\.clis\\[0\\]\\.id$`));
});

// Toolkits the operator turns off: each case sets extensions.<id>.toolkits and says what loads.
const toolkitCases: Record<
  string,
  {
    toolkits: Record<string, unknown>;
    strict?: boolean;
    offered?: string[];
    withheld?: { id: string; path: string; message: RegExp }[];
    refused?: string[];
  }
> = {
  "a disabled toolkit named by the CLI's toolkit field withholds that CLI only": {
    toolkits: { atlassian: { jira: { enabled: false } } },
    offered: ['github:cli:gh', 'azure:cli:az'],
    withheld: [
      {
        id: 'atlassian:cli:curl',
        path: 'extensions.atlassian.toolkits.jira.enabled',
        message: /the CLI curl belongs to the toolkit "jira", which the configuration disables/,
      },
    ],
  },
  'a disabled toolkit owning its CLIs through auth.default withholds them': {
    toolkits: { github: { github: { enabled: false } } },
    offered: ['azure:cli:az', 'atlassian:cli:curl'],
    withheld: [
      { id: 'github:cli:gh', path: 'extensions.github.toolkits.github.enabled', message: /toolkit "github"/ },
    ],
  },
  'disabling a toolkit no CLI belongs to withholds nothing': {
    toolkits: { atlassian: { reports: { enabled: false } } },
    offered: ['github:cli:gh', 'azure:cli:az', 'atlassian:cli:curl'],
    withheld: [],
  },
  'enabled: true is the default written out': {
    toolkits: { atlassian: { jira: { enabled: true } } },
    offered: ['github:cli:gh', 'azure:cli:az', 'atlassian:cli:curl'],
    withheld: [],
  },
  'a toolkit the manifest does not declare refuses the load': {
    toolkits: { atlassian: { confluence: { enabled: false } } },
    refused: ['CONFIG_FIELD_INVALID extensions.atlassian.toolkits.confluence'],
  },
  'an entry without enabled, or with another field, refuses the load': {
    toolkits: { atlassian: { jira: {} }, github: { github: { enabled: false, note: 'x' } } },
    refused: [
      'CONFIG_FIELD_INVALID extensions.atlassian.toolkits.jira.enabled',
      'CONFIG_FIELD_UNKNOWN extensions.github.toolkits.github.note',
    ],
  },
  // the operator's choice, not a problem: strict refuses problems only
  'strict: a disabled toolkit still withholds its CLIs, and the rest loads': {
    toolkits: { atlassian: { jira: { enabled: false } } },
    strict: true,
    offered: ['github:cli:gh', 'azure:cli:az'],
    withheld: [
      {
        id: 'atlassian:cli:curl',
        path: 'extensions.atlassian.toolkits.jira.enabled',
        message: /toolkit "jira"/,
      },
    ],
  },
};

t.test('toolkits the configuration disables', async (t) => {
  t.plan(Object.keys(toolkitCases).length);
  for (const [name, c] of Object.entries(toolkitCases)) {
    await t.test(name, async (t) => {
      const f = makeFixture(t);
      for (const [ext, toolkits] of Object.entries(c.toolkits)) f.config.extensions[ext].toolkits = toolkits;
      if (c.strict) f.config.strict = true;
      if (c.refused) {
        const e = await rejection(loadConfig(f.write(), { env: f.env }));
        t.equal(e.code, 'CONFIG_INVALID');
        t.same(
          ((e.details?.['problems'] ?? []) as ConfigProblem[]).map((p) => `${p.code} ${p.path}`).sort(),
          c.refused,
        );
        return;
      }
      const loaded = await loadConfig(f.write(), { env: f.env });
      t.same(
        loaded.tools.map((x) => x.id),
        c.offered,
      );
      t.equal(loaded.withheld.length, c.withheld!.length);
      for (const [i, w] of c.withheld!.entries())
        t.match(loaded.withheld[i], { ...w, code: 'TOOL_VENDOR_CLI_TOOLKIT_DISABLED' });
    });
  }
});

t.test('a disabled CLI keeps its tool name: the other curl stays qualified', async (t) => {
  const f = makeFixture(t);
  secondCurl(f, 'confluence');
  f.config.extensions.atlassian.toolkits = { jira: { enabled: false } };
  const c = await loadConfig(f.write(), { env: f.env });
  t.same(names(c), [
    ['github:cli:gh', 'gh_cli'],
    ['azure:cli:az', 'az_cli'],
    ['confluence:cli:curl', 'confluence__curl_cli'],
  ]);
  t.match(c.withheld, [
    { id: 'atlassian:cli:curl', name: 'atlassian__curl_cli', code: 'TOOL_VENDOR_CLI_TOOLKIT_DISABLED' },
  ]);
});
