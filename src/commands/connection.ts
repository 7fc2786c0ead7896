/**
 * Where the connection (the secret) of `vendor run|resume` comes from: $CLIBROKER_CONNECTION or
 * a `--connection-file`. Secrets never travel in argv, and the connection is never written
 * anywhere (not in the run spec, not in the store).
 *
 * Loaded only by a command's `run` (a dynamic import), like every back-end of the bundled
 * commands: `--help` never pays for the broker, the runner, the store or SQLite.
 */
import { readFileSync } from 'node:fs';
import type { Connection } from '../credentials/types.js';
import { ENV, type Env } from './env.js';
import { echo, fail } from '../cli/envelope.js';

const CONNECTION_FIELDS: Record<Connection['kind'], { required: string[]; optional?: string[] }> = {
  oauth_access_token: { required: ['accessToken'] },
  api_key: { required: ['apiKey'] },
  bot_token: { required: ['token'] },
  basic: { required: ['username', 'password'] },
  oauth_client_credentials: {
    required: ['clientId', 'clientSecret', 'tokenUrl'],
    optional: ['tenantId', 'scopes'],
  },
  github_app: {
    required: ['appId', 'installationId', 'privateKey'],
    optional: ['permissions', 'repositories'],
  },
};

const CONNECTION_EXAMPLE = '{"kind":"oauth_access_token","accessToken":"<token>"}';

/**
 * Check a connection's shape. Messages name fields and kinds only — never a value, since
 * every string in a connection may be a secret.
 */
export function checkConnection(value: unknown, source: string): Connection {
  const bad = (what: string): never =>
    fail('auth', `the connection from ${source} ${what}`, {
      flag: 'connection-file',
      expected: `one of kind ${Object.keys(CONNECTION_FIELDS).join(', ')}, e.g. ${CONNECTION_EXAMPLE}`,
      hint: 'docs/credentials.md lists the fields of each kind',
    });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return bad('is not a JSON object');
  const o = value as Record<string, unknown>;
  const spec = CONNECTION_FIELDS[o['kind'] as Connection['kind']];
  if (typeof o['kind'] !== 'string' || !spec) return bad('has no known kind');
  for (const k of spec.required)
    if (typeof o[k] !== 'string' || o[k] === '') bad(`(kind ${o['kind']}) lacks the string field ${k}`);
  const known = new Set(['kind', ...spec.required, ...(spec.optional ?? [])]);
  const extra = Object.keys(o).filter((k) => !known.has(k));
  if (extra.length) bad(`(kind ${o['kind']}) has unknown field(s) ${extra.join(', ')}`);
  if (o['tenantId'] !== undefined && typeof o['tenantId'] !== 'string')
    bad('has a tenantId that is not a string');
  if (
    o['scopes'] !== undefined &&
    !(Array.isArray(o['scopes']) && o['scopes'].every((s) => typeof s === 'string'))
  )
    bad('has scopes that are not a string array');
  return o as unknown as Connection;
}

/**
 * The connection: `--connection-file <path>` when given (an explicit flag wins), else
 * $CLIBROKER_CONNECTION. Never argv, never stdin (stdin belongs to the vendor CLI).
 */
export function loadConnection(file: string | undefined, env: Env = process.env): Connection {
  if (file !== undefined) {
    if (file === '-') {
      fail(
        'flag-parse',
        "--connection-file does not read stdin: stdin is the vendor CLI's (--stdin-file -)",
        {
          flag: 'connection-file',
          got: file,
          hint: `pass a file path (e.g. --connection-file <(vault read …) or a 0600 file), or set ${ENV.connection}`,
        },
      );
    }
    // A value that looks like the JSON itself holds the secret: it is never repeated, not even redacted.
    const inline = /^\s*[{["]/.test(file) || file.includes('\n');
    const named = inline ? '--connection-file' : `--connection-file ${echo(file, 100)}`;
    if (inline) {
      return fail(
        'flag-parse',
        '--connection-file takes a path, but its value looks like the connection JSON itself (not repeated here: it holds the secret)',
        {
          flag: 'connection-file',
          expected: '--connection-file <path of a 0600 file holding the connection JSON>',
          hint: `write the JSON to a 0600 file and pass its path, or set ${ENV.connection}; secrets never go in argv (where other processes can read them)`,
        },
      );
    }
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      return fail(
        'flag-parse',
        `cannot read ${named}: ${(e as NodeJS.ErrnoException).code ?? 'unreadable'}`,
        {
          flag: 'connection-file',
          got: file,
          hint: 'pass a readable file holding the connection JSON',
        },
      );
    }
    return checkConnection(parseSecretJson(text, named), named);
  }
  const raw = env[ENV.connection];
  if (raw === undefined || raw === '') {
    return fail(
      'auth',
      `no connection: set ${ENV.connection} to the connection JSON, or pass --connection-file <path>`,
      {
        flag: 'connection-file',
        expected: CONNECTION_EXAMPLE,
        hint: 'the secret never goes in argv, so there is no --connection flag',
      },
    );
  }
  return checkConnection(parseSecretJson(raw, `$${ENV.connection}`), `$${ENV.connection}`);
}

/** JSON.parse without echoing the text (it holds a secret). */
function parseSecretJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return fail('auth', `the connection from ${source} is not valid JSON`, {
      flag: 'connection-file',
      expected: CONNECTION_EXAMPLE,
    });
  }
}
