/**
 * Every log line carries exactly one `time` key. An egress line logs the audit event, which has
 * its own `time`; the logger stamps one too. JSON.parse keeps the last of duplicate keys, so the
 * keys are counted in the raw text of each line.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { EGRESS_MSG } from '../../src/audit/emit.js';
import { createLogger } from '../../src/index.js';
import { brokerFixture } from '../helpers/broker.js';
import { curl } from '../helpers/curl.js';

function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  let partial = '';
  const stream = new Writable({
    write(chunk, _e, cb) {
      const parts = (partial + String(chunk)).split('\n');
      partial = parts.pop() ?? '';
      lines.push(...parts.filter((l) => l !== ''));
      cb();
    },
  });
  return { lines, stream };
}

/** How many times `"time":` occurs as a key in the line's top-level object or anywhere below. */
function timeKeys(line: string): number {
  return line.match(/"time":/g)?.length ?? 0;
}

async function egressLines(t: Test, logger: pino.Logger, lines: string[]): Promise<string[]> {
  const { session, events } = await brokerFixture(t, { broker: { logger } });
  const s = session();
  const ok = await curl(s, ['https://api.example.com/ok']);
  t.equal(ok.code, 0, ok.stderr);
  await curl(s, ['https://elsewhere.example.net/x']);
  t.same(
    events.map((e) => e.type),
    ['egress.allowed', 'egress.blocked'],
    'a host outside the egress list is refused',
  );
  for (const e of events) t.type(e.time, 'string', 'the event itself keeps its time');
  const egress = lines.filter((l) => JSON.parse(l).msg === EGRESS_MSG);
  t.equal(egress.length, 2, 'both events are logged');
  t.same(
    egress.map((l) => JSON.parse(l).level),
    [30, 40],
    'allowed at info, refused at warn',
  );
  return egress;
}

t.test('createLogger: each line has one ISO `time`, egress lines included', async (t) => {
  const { lines, stream } = capture();
  const logger = createLogger({ level: 'trace' }, stream);
  const egress = await egressLines(t, logger, lines);
  logger.info({ event: 'other' }, 'a line of the host');
  t.ok(lines.length > egress.length, 'other lines are checked too');
  for (const l of lines) {
    t.equal(timeKeys(l), 1, `one time key: ${l.slice(0, 120)}`);
    t.match(JSON.parse(l).time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  }
});

t.test("a host's own pino logger: egress lines still carry one `time`", async (t) => {
  const { lines, stream } = capture();
  const egress = await egressLines(t, pino({ level: 'info' }, stream), lines);
  for (const l of egress) t.equal(timeKeys(l), 1, `one time key: ${l.slice(0, 120)}`);
});
