/**
 * An audit event that reaches the runner after the call's result was taken (and its execution
 * event written) is stored — nothing the broker audits is dropped — and changes nothing in the
 * result the caller already holds. The broker is the real one; only its delivery of the
 * session's audit events to the runner is held back, past the runner's bounded wait for them,
 * as a broker slowed by a busy event loop would deliver them.
 */
import t from 'tap';
import type { Broker } from '../../src/broker/broker.js';
import { createRunner } from '../../src/runs/runner.js';
import { runFixture } from './fixtures.js';

/** How long each of the session's audit events is held back: longer than the runner waits for them. */
const LATE_MS = 1_500;

/** The real broker, with every session's audit events delivered `LATE_MS` late. */
function late(broker: Broker, delivered: () => void): Broker {
  return new Proxy(broker, {
    get(target, prop) {
      if (prop === 'openSession')
        return (o: Parameters<Broker['openSession']>[0]) =>
          target.openSession({
            ...o,
            onAudit: (e) =>
              setTimeout(() => {
                o.onAudit?.(e);
                delivered();
              }, LATE_MS),
          });
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

t.test('an event after the execution event is stored, and the result stays as it was returned', async (t) => {
  const f = await runFixture(t);
  let delivered = 0;
  const runner = createRunner({ broker: late(f.broker, () => delivered++), store: f.store });
  const r = await runner.run(
    f.input('curl', [
      '-sS',
      'https://telemetry.example.com/ping',
      '--next',
      '-sS',
      'https://api.github.com/user',
    ]),
  );
  const asReturned = JSON.stringify(r);
  t.equal(r.status, 'completed', r.stderr);
  t.same(r.refusals, [], 'the refusal had not arrived when the result was taken');
  const execution = await f.store.listEvents({ runId: r.runId, type: 'extension.execution.succeeded' });
  t.equal(execution.length, 1, 'the execution event is written');

  // the late events arrive: both the refusal and the forwarded request
  while (delivered < 2) await new Promise((res) => setTimeout(res, 50));
  const egress = await f.store.listEvents({ runId: r.runId, type: ['egress.allowed', 'egress.blocked'] });
  t.same(
    egress.map((e) => e.event.type).sort(),
    ['egress.allowed', 'egress.blocked'],
    'every late event is stored',
  );
  t.ok(
    egress.every((e) => e.seq > execution[0]!.seq),
    'after the execution event',
  );
  t.equal(JSON.stringify(r), asReturned, 'the result the caller holds did not change');
  const again = await f.store.listEvents({
    runId: r.runId,
    type: ['extension.execution.succeeded', 'extension.execution.failed'],
  });
  t.same(again, execution, 'nor did its execution event, and no second one was written');
});
