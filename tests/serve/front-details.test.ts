/**
 * Where the operator's database is never leaves a front door: a store failure's
 * `details.store` (the redacted URL) and `details.storeError` (the driver's words, which name
 * the server's address) are dropped by the daemon's and serve's wire answer and by MCP's tool
 * error, and the rest of the details stay.
 */
import t from 'tap';
import { wireError } from '../../src/daemon/server.js';
import { BrokerError } from '../../src/errors.js';
import { errorResult } from '../../src/serve/mcp.js';
import { wireError as serveWire } from '../../src/serve/wire.js';

const failure = () =>
  new BrokerError('STORE_UNAVAILABLE', {
    details: {
      store: 'postgres://clibroker:***@db.internal.example:5432/clibroker',
      storeError: 'ECONNREFUSED: connect ECONNREFUSED 10.1.2.3:5432',
      inFlight: false,
      lostEvents: 2,
    },
  });

t.test('the daemon, serve and MCP answer without the database location', async (t) => {
  const answers = {
    daemon: wireError(failure()).error,
    serve: serveWire(failure()).error,
    mcp: (errorResult(failure()).structuredContent as { error: unknown }).error,
  };
  for (const [door, answer] of Object.entries(answers)) {
    const text = JSON.stringify(answer);
    t.notMatch(text, /db\.internal|10\.1\.2\.3|5432/, `${door}: no location`);
    t.match(
      answer,
      { code: 'STORE_UNAVAILABLE', details: { inFlight: false, lostEvents: 2 } },
      `${door}: the rest stays`,
    );
  }
});
