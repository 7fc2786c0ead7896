// The broker loads three parts of undici from their own modules instead of its main entry
// (src/broker/undici.ts). An undici that moved them would silently cost the slow path: this
// fails instead, so the move is noticed when undici is upgraded.
import t from 'tap';
import * as Undici from 'undici';
import { undici } from '../../src/broker/undici.js';

t.test('the installed undici has the parts where the broker loads them from', async (t) => {
  const parts = undici();
  t.equal(parts.from, 'parts');
  // the same classes as the main entry's
  t.equal(parts.Agent, Undici.Agent);
  t.equal(parts.buildConnector, Undici.buildConnector);
});
