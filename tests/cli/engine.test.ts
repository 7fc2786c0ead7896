/**
 * The in-process engine of `vendor run|resume`: a whole run through it (curl against the
 * embedded mock vendor), and the one-shot start-up work it arranges — the parse of node's
 * root certificates after the first child process starts — ends with the invocation: the
 * listener on child processes is gone once a child started, and after close when none did.
 */
import { spawn } from 'node:child_process';
import { hasSubscribers } from 'node:diagnostics_channel';
import t from 'tap';
import { startEngine } from '../../src/commands/engine.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { CONNECTION_JSON, extension } from './fixtures/vendor.js';

const connection = JSON.parse(CONNECTION_JSON);
const env = { CLIBROKER_MOCK_VENDOR: 'github' };

t.test('a run through the engine: the listener goes with the first child, the run completes', async (t) => {
  const store = openSqliteStore(':memory:');
  t.teardown(() => store.close());
  t.equal(hasSubscribers('child_process'), false, 'nothing listens before the engine starts');
  const engine = await startEngine(store, connection, env);
  t.teardown(() => engine.close());
  t.equal(engine.mockVendor, 'github');
  t.equal(hasSubscribers('child_process'), true, 'the engine waits for its first child');
  const result = await engine.runner.run({
    extension,
    cli: 'curl',
    args: ['-sS', 'https://api.github.com/user'],
    connection,
    tier: { organizationCeiling: 'write', assignmentAllow: 'read', identity: 'assigned' },
    context: { kind: 'agent-step' },
  });
  t.equal(result.status, 'completed', result.stderr);
  t.match(result.stdout, /"login":"octocat"/, 'the mock vendor saw the real token');
  t.equal(hasSubscribers('child_process'), false, 'the first child took the listener with it');
});

t.test('an engine that never starts a child leaves no listener after close', async (t) => {
  const store = openSqliteStore(':memory:');
  t.teardown(() => store.close());
  const engine = await startEngine(store, connection, env);
  t.equal(hasSubscribers('child_process'), true);
  await engine.close();
  t.equal(hasSubscribers('child_process'), false);
  // a child started after close is none of the engine's business
  await new Promise((resolve) => spawn(process.execPath, ['-e', '0']).once('exit', resolve));
  t.equal(hasSubscribers('child_process'), false);
});
