import { Writable } from 'node:stream';
import t from 'tap';
import { createLogger, CREDENTIAL_HEADERS } from '../../src/audit/logger.js';

function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  return {
    lines,
    stream: new Writable({
      write(chunk, _e, cb) {
        lines.push(String(chunk));
        cb();
      },
    }),
  };
}

t.test('credential headers are censored wherever a host logs them', async (t) => {
  const { lines, stream } = capture();
  const log = createLogger({ level: 'info' }, stream);
  const secret = 'gho_SecretThatMustNotBeLogged0001';
  log.info({ authorization: `token ${secret}` }, 'top level');
  log.info(
    {
      headers: { authorization: `Bearer ${secret}`, 'proxy-authorization': `Basic ${secret}`, accept: '*/*' },
    },
    'one deep',
  );
  log.info({ req: { headers: { cookie: `s=${secret}`, 'x-api-key': secret } } }, 'two deep');
  t.equal(lines.length, 3);
  for (const l of lines) t.notMatch(l, /SecretThatMustNotBeLogged/, JSON.parse(l).msg);
  t.match(lines[1], /"accept":"\*\/\*"/, 'other headers stay');
  t.match(lines[1], /\[REDACTED\]/);
});

t.test('the list is fed from the strip phase', async (t) => {
  t.ok(CREDENTIAL_HEADERS.includes('authorization'));
  t.ok(CREDENTIAL_HEADERS.includes('proxy-authorization'));
});

t.test('redactLogText: userinfo, secret shapes and length', async (t) => {
  const { redactLogText, MAX_LOGGED_STRING } = await import('../../src/audit/logger.js');
  const cases: Record<string, [string, RegExp, RegExp?]> = {
    'CONNECT target with userinfo': [
      'id:hunter2@api.example.com:443',
      /^\[REDACTED\]@api\.example\.com:443$/,
    ],
    'URL with userinfo': ['see https://u:pw@host.example/x', /^see https:\/\/\[REDACTED\]@host\.example\/x$/],
    'a token in prose': [
      'failed with ghp_0123456789abcdefABCDEF0123456789abcd here',
      /^failed with \[REDACTED\] here$/,
    ],
    'plain text stays': ['clibroker: tunnel TLS error', /^clibroker: tunnel TLS error$/],
  };
  for (const [name, [input, want]] of Object.entries(cases)) t.match(redactLogText(input), want, name);
  t.ok(redactLogText('x'.repeat(10_000)).length <= MAX_LOGGED_STRING + 1, '10 KB is cut');
});

t.test(
  'brokerLog: every field redacted; an uncoded error logs no text, a coded one a redacted message',
  async (t) => {
    const { brokerLog } = await import('../../src/audit/logger.js');
    const { pino } = await import('pino');
    const { lines, stream } = capture();
    const log = brokerLog(pino({ level: 'debug' }, stream))!;
    log.error({ err: new Error('secret detail s3cr3t') }, 'uncoded');
    log.error(
      {
        err: Object.assign(new Error('connect ECONNREFUSED for ghp_0123456789abcdefABCDEF0123456789abcd'), {
          code: 'ECONNREFUSED',
        }),
      },
      'coded',
    );
    log.warn({ nested: { target: 'a:b@c.example:443', authorization: 'Bearer x' } }, 'nested');
    t.equal(lines.length, 3);
    t.notMatch(lines[0], /s3cr3t/);
    t.match(lines[1], /ECONNREFUSED/);
    t.notMatch(lines[1], /ghp_/);
    t.notMatch(lines[2], /a:b@/);
    t.notMatch(lines[2], /Bearer x/);
    t.equal(brokerLog(undefined), undefined);
  },
);
