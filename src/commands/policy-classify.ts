/**
 * `clibroker policy classify`: what the broker would call a request (read, write,
 * destructive) and why, without sending anything. The back-end is `src/policy` (pure),
 * imported only when the command runs so `--help` stays cold-start cheap.
 */
import { defineTool } from '../cli/define.js';
import { echo, fail } from '../cli/envelope.js';

/** Split `--header 'name: value'` lines into lower-case header names. */
function headerMap(lines: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [n, line] of lines.entries()) {
    const i = line.indexOf(':');
    // never the line itself: a header value is often a credential
    if (i <= 0)
      fail('flag-parse', `--header number ${n + 1} is not 'name: value' (no ':' after the name)`, {
        flag: 'header',
        expected: "--header 'content-type: application/json'",
      });
    out[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return out;
}

/** The request target (path and query) of an absolute https URL or an origin-form path. */
function targetOf(url: string): string {
  if (url.startsWith('/')) return url;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    fail('flag-parse', `--url '${echo(url, 100)}' is neither an absolute URL nor a path starting with /`, {
      flag: 'url',
      expected: '--url https://api.github.com/repos/o/r or --url /repos/o/r',
    });
  }
  return `${u.pathname}${u.search}`;
}

export const policyClassify = defineTool({
  namespace: 'policy',
  name: 'classify',
  description:
    'Classify one HTTP request as read, write or destructive, with the stable reason and any GraphQL operations. Sends nothing.',
  parameters: {
    method: { type: 'string', describe: 'HTTP method, e.g. GET or POST (upper case as sent)' },
    url: { type: 'string', describe: 'the request URL (https://host/path?query) or just /path?query' },
    header: {
      type: 'array',
      items: { type: 'string' },
      optional: true,
      cliAliases: ['headers'],
      describe: "a request header as 'name: value'",
    },
    body: { type: 'string', optional: true, describe: 'the request body (for GraphQL POSTs)' },
    overrides: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          match: {
            type: 'object',
            properties: {
              method: { type: 'string', optional: true },
              pathPattern: { type: 'string', optional: true },
              graphqlOperation: { type: 'string', optional: true },
            },
          },
          wireClass: { type: 'enum', values: ['read', 'write', 'destructive'] },
        },
      },
      optional: true,
      cliAliases: ['override'],
      describe: "the CLI manifest's wirePolicy.overrides to apply",
    },
  },
  cli: {
    fileInputAlternatives: [
      {
        paramName: 'body',
        fileFlag: 'body-file',
        parseAs: 'text',
        description: 'read the request body from a file',
      },
      {
        paramName: 'overrides',
        fileFlag: 'overrides-file',
        parseAs: 'json',
        description: 'read the overrides (JSON) from a file',
      },
    ],
  },
  examples: [
    {
      params: { method: 'DELETE', url: 'https://api.github.com/repos/o/r' },
      comment: 'a DELETE is destructive',
    },
    {
      params: {
        method: 'POST',
        url: 'https://api.github.com/graphql',
        header: ['content-type: application/json'],
        body: '{"query":"mutation { addStar(input: {starrableId: \\"x\\"}) { clientMutationId } }"}',
      },
      comment: 'a GraphQL mutation is write',
    },
    {
      params: {
        method: 'POST',
        url: 'https://api.github.com/repos/o/r/issues/1/lock',
        overrides: [
          { match: { method: 'POST', pathPattern: '/repos/*/*/issues/*/lock' }, wireClass: 'destructive' },
        ],
      },
      comment: 'an override tightens a POST to destructive',
    },
    {
      params: {
        method: 'POST',
        url: 'https://api.github.com/repos/o/r/issues',
        header: ['content-type: application/json'],
        body: '{\n  "title": "`npm test` fails",\n  "body": "Run $(node --version) first; it says \'v20\'."\n}\n',
      },
      viaFile: 'body',
      comment: 'a multi-line body with backticks, quotes and $(…), from a heredoc the shell leaves alone',
    },
  ],
  outputShape:
    "{class: 'read'|'write'|'destructive', reason: string, baseClass, baseReason, overridesApplied: number[], graphql?: {parsed: boolean, operations: {type, name?, rootFields: string[]}[], operationName?, batch: boolean}}",
  async run(p) {
    const { classify } = await import('../policy/index.js');
    const headers = headerMap(p.header ?? []);
    return classify({
      method: p.method,
      target: targetOf(p.url),
      headers,
      ...(p.body === undefined ? {} : { body: Buffer.from(p.body) }),
      ...(p.overrides === undefined ? {} : { overrides: p.overrides }),
    });
  },
});
