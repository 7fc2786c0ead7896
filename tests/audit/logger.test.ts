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
  log.info({ headers: { authorization: `Bearer ${secret}`, 'proxy-authorization': `Basic ${secret}`, accept: '*/*' } }, 'one deep');
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
