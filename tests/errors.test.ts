import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { messageShapes, renderErrorsDoc } from '../scripts/errors-doc.js';
import { MESSAGES } from '../src/error-messages.js';
import {
  BrokerError,
  brokerError,
  CATALOGUE,
  type ErrorCode,
  errorMessage,
  isErrorCode,
  messageWithoutCode,
  policyError,
  REASON_PHRASES,
} from '../src/errors.js';

t.test('docs/errors.md is generated from the catalogue', async (t) => {
  const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
  t.equal(doc, renderErrorsDoc(), 'run `npm run docs:errors` after changing src/errors.ts');
});

t.test(
  'every status the child can see has a standard reason phrase and is never 5xx for a refusal',
  async (t) => {
    for (const [code, s] of Object.entries(CATALOGUE)) {
      if (s.status === undefined) continue;
      t.ok(REASON_PHRASES[s.status], `${code} ${s.status} has a reason phrase`);
      if (s.side === 'policy' || s.side === 'child') t.ok(s.status < 500, `${code} is a 4xx refusal`);
    }
  },
);

t.test('BrokerError carries code, status and policy code', async (t) => {
  const e = new BrokerError('POLICY_BLOCKED', { policyCode: 'CLI_REQUEST_TIER_DENIED' });
  t.equal(e.status, 422);
  t.match(e.message, /CLI_REQUEST_TIER_DENIED/);
  t.same(e.toJSON().policyCode, 'CLI_REQUEST_TIER_DENIED');
});

// ── Codes are append-only ─────────────────────────────────────────────────────────

const SNAPSHOT = new URL('./errors/codes.snapshot.txt', import.meta.url);
const snapshot = readFileSync(SNAPSHOT, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '' && !l.startsWith('#'));

t.test('no code of the snapshot is removed or renamed', async (t) => {
  const gone = snapshot.filter((c) => !isErrorCode(c));
  t.same(
    gone,
    [],
    'codes are append-only: a code in tests/errors/codes.snapshot.txt was removed from or renamed in src/errors.ts; put it back (a code no longer raised stays, its summary may say so)',
  );
  t.equal(new Set(snapshot).size, snapshot.length, 'each code is listed once');
});

t.test('every code of the catalogue is in the snapshot', async (t) => {
  const listed = new Set(snapshot);
  const missing = Object.keys(CATALOGUE).filter((c) => !listed.has(c));
  t.same(
    missing,
    [],
    'a new code: append it at the end of tests/errors/codes.snapshot.txt (never edit or reorder the lines above)',
  );
});

// ── The catalogue owns the words ──────────────────────────────────────────────────

t.test('a templated code renders CODE: text from its data', async (t) => {
  const e = brokerError('CLI_PORT_REFUSED', { host: 'api.github.com', port: 8443 });
  t.equal(e.code, 'CLI_PORT_REFUSED');
  t.equal(e.message, 'CLI_PORT_REFUSED: only port 443 can be tunnelled; api.github.com:8443 was refused.');
  t.equal(e.status, 403);
  const details = { host: 'x' };
  t.same(brokerError('CLI_HTTP2_ONLY', { host: 'x' }, { details }).details, details, 'options pass through');
});

t.test('a policy refusal is POLICY_BLOCKED, its message headed by the rule', async (t) => {
  const e = policyError('CLI_EGRESS_HOST_DENIED', { host: 'evil.example' });
  t.equal(e.code, 'POLICY_BLOCKED');
  t.equal(e.policyCode, 'CLI_EGRESS_HOST_DENIED');
  t.same(e.details, { policyCode: 'CLI_EGRESS_HOST_DENIED' });
  t.match(e.message, /^CLI_EGRESS_HOST_DENIED: evil\.example is not in this extension's egress list/);
  t.equal(
    errorMessage('CLI_REQUEST_TIER_DENIED', { class: 'write', reason: 'method-post' }),
    'CLI_REQUEST_TIER_DENIED: this write request (method-post) needs tier write, and this call runs at tier read. Run the command with cliTier write, if the organization and assignment allow it.',
  );
});

t.test('a fixed sentence is the default message of its code', async (t) => {
  t.equal(
    new BrokerError('CLI_TIMEOUT').message,
    'CLI_TIMEOUT: the CLI did not finish before the call deadline and was killed.',
  );
  t.equal(
    new BrokerError('STORE_CLOSED').message,
    `STORE_CLOSED: ${CATALOGUE.STORE_CLOSED.summary}`,
    'a code without a template says its summary',
  );
});

t.test('every template belongs to a code and never writes a code itself', async (t) => {
  for (const code of Object.keys(MESSAGES)) {
    t.ok(isErrorCode(code), `${code} is a catalogue code`);
    for (const shape of messageShapes(code as ErrorCode)) {
      const text = shape.slice(code.length + 2);
      t.notMatch(
        text,
        /^[A-Z][A-Z0-9]*_[A-Z0-9_]+:/,
        `${code}: the renderer adds the code, the template does not`,
      );
    }
  }
});

/** Source files whose `CODE: …` strings are not error messages, each with why. */
const NOT_MESSAGES: Readonly<Record<string, string>> = {
  'src/errors.ts': 'the catalogue itself (its summaries may name codes)',
  'src/error-catalogue.ts': 'the catalogue itself (its summaries may name codes)',
  'src/error-messages.ts': 'the templates',
  'src/commands/run.ts': "the tool's description names what CLI_APPROVAL_PENDING means",
  'src/config/manifests.ts':
    "a CONFIG_MANIFEST_INVALID problem quotes the manifest's own problem, code first",
  'src/serve/mcp.ts':
    "an MCP text result heads a BrokerError's message with its code when it is not there yet",
};
/** Files not converted yet: each one is a debt, listed so it shrinks; never add to it (none left). */
const NOT_YET: ReadonlySet<string> = new Set<string>([]);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    return d.isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

t.test('no call site writes a CODE: message by hand', async (t) => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  // a string or template literal starting with a catalogue code and a colon, or with `${code}: `
  const literal = /[`'"]([A-Z][A-Z0-9]*_[A-Z0-9_]+): /g;
  const dynamic = /`\$\{[^}]*\b(code|name|policyCode)\}: /;
  const found: string[] = [];
  for (const file of sources(join(root, 'src'))) {
    const rel = relative(root, file).split(sep).join('/');
    if (NOT_MESSAGES[rel] || NOT_YET.has(rel)) continue;
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        const hit = [...line.matchAll(literal)].some((m) => isErrorCode(m[1]!)) || dynamic.test(line);
        if (hit) found.push(`${rel}:${i + 1}: ${line.trim().slice(0, 100)}`);
      });
  }
  t.same(found, [], 'pass data to brokerError / policyError / errorMessage (src/errors.ts) instead');
  for (const rel of NOT_YET) t.ok(existsSync(join(root, rel)), `${rel} still exists (drop it from NOT_YET)`);
});

t.test('messageWithoutCode: the message as read beside its code', async (t) => {
  const e = brokerError('DAEMON_SOCKET_IN_USE', {
    path: '/run/x.sock',
    why: 'has a process listening on it',
  });
  t.equal(messageWithoutCode(e), e.message.slice('DAEMON_SOCKET_IN_USE: '.length), 'its own code goes');
  const p = new BrokerError('POLICY_BLOCKED', { policyCode: 'CLI_REQUEST_TIER_DENIED' });
  t.notMatch(messageWithoutCode(p), /^POLICY_BLOCKED/, 'a policy refusal loses its code and rule head');
  t.equal(
    messageWithoutCode({ code: 'SERVE_FORBIDDEN', message: 'CONFIG_INVALID: another code' }),
    'CONFIG_INVALID: another code',
    'a message that starts with another code is kept whole',
  );
});
