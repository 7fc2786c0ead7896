/**
 * The in-process engine of one `vendor run|resume` invocation: a broker and a runner, and for
 * demos and tests the embedded mock vendor.
 *
 * Loaded only by a command's `run` (a dynamic import), like every back-end of the bundled
 * commands: `--help` never pays for the broker, the runner, the store or SQLite.
 */
import type { ChildProcess } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { isIPv6 } from 'node:net';
import { createSecureContext } from 'node:tls';
import { type Connection, isApplicationIdentity } from '../credentials/types.js';
import type { Runner } from '../runs/index.js';
import type { Store } from '../store/types.js';
import { ENV, type Env } from './env.js';
import { echo, fail } from '../cli/envelope.js';

/**
 * The token minter's client (undici, loaded only to mint an OAuth token) parses responses
 * with llhttp compiled to WebAssembly. V8 runs it
 * on its baseline compiler (Liftoff) and, once a function is hot, recompiles it with its
 * optimising one on a background thread: for llhttp's parser function ~0.4–0.6 s of CPU and
 * ~30–40 MiB. A process never exits while such a job runs, so a one-shot `vendor run` waited
 * 100–170 ms after printing its result for code it would never use, and the compile was its
 * peak RSS. The baseline code parses a chunked body ~1 ms per MiB slower, so the optimisation
 * pays back only after hundreds of MiB in one call: one invocation stays on Liftoff. Set
 * before the upstream client loads, for this process only.
 */
async function oneShotWasm(): Promise<void> {
  const { setFlagsFromString } = await import('node:v8');
  // V8 prints an error for a flag it does not know: only on the V8 versions it is known on
  // (node 20 to 23), so a later node skips it instead of writing to the CLI's stderr.
  const major = Number(process.versions.v8.split('.')[0]);
  if (major >= 11 && major <= 13) setFlagsFromString('--liftoff-only');
}

/**
 * Node parses its bundled root certificates once per process, for the first TLS context that
 * trusts any certificate at all (30–50 ms here): the first upstream connection, while the
 * vendor CLI waits for its first answer. The CLI's own start-up, from its spawn to its first
 * CONNECT (~100 ms for gh), is idle time for this process, so the parse runs then: after the
 * first child process of the invocation has started. The context built is thrown away; the
 * parsed roots are what stays (node shares them with every later context). Returns the
 * unsubscribe for a run that never got as far as a child.
 */
function warmRootsAfterSpawn(): () => void {
  const onChild = (message: unknown): void => {
    stop();
    (message as { process: ChildProcess }).process.once('spawn', () =>
      setImmediate(() => {
        createSecureContext();
        // node's IPv6 pattern is compiled on its first use, which is otherwise the first
        // CONNECT's (a few ms): any name node or the broker checks for being an address
        isIPv6('::1');
      }),
    );
  };
  const stop = (): void => {
    unsubscribe('child_process', onChild);
  };
  subscribe('child_process', onChild);
  return stop;
}

/** A broker and a runner for one invocation; `close` ends them (not the store). */
export interface Engine {
  runner: Runner;
  /** the embedded mock vendor's name, when $CLIBROKER_MOCK_VENDOR started one */
  mockVendor?: string;
  close(): Promise<void>;
}

/**
 * Start a broker in this process, and — for demos and tests only — the embedded mock vendor
 * named by $CLIBROKER_MOCK_VENDOR (`github`), with every host mapped to it. The mock checks
 * that the connection's own secret arrived, so a passing call proves the stamping.
 */
export async function startEngine(
  store: Store,
  connection: Connection,
  env: Env = process.env,
): Promise<Engine> {
  // only a call that mints a token loads undici, and its WebAssembly
  if (isApplicationIdentity(connection) || connection.kind === 'github_app') await oneShotWasm();
  const [{ createBroker }, { createRunner }] = await Promise.all([
    import('../broker/broker.js'),
    import('../runs/runner.js'),
  ]);
  const mock = env[ENV.mockVendor];
  let vendor:
    | { caPem: string; resolve(host: string): { host: string; port: number }; close(): Promise<void> }
    | undefined;
  if (mock) {
    if (mock !== 'github')
      fail('runtime', `${ENV.mockVendor}=${echo(mock, 60)} names no embedded mock vendor`, {
        code: 'COMMAND_INPUT_INVALID',
        got: mock,
        expected: 'github',
      });
    const [{ startMockVendor }, { githubVendor }, { connectionSecrets }] = await Promise.all([
      import('../mockvendor/server.js'),
      import('../mockvendor/github.js'),
      import('../credentials/types.js'),
    ]);
    vendor = await startMockVendor(githubVendor({ token: connectionSecrets(connection)[0] ?? '' }));
  }
  const broker = await createBroker(
    vendor
      ? { upstream: { ca: vendor.caPem, resolve: vendor.resolve, allowAddresses: ['127.0.0.0/8'] } }
      : {},
  );
  const stopWarming = warmRootsAfterSpawn();
  return {
    runner: createRunner({ broker, store }),
    ...(mock ? { mockVendor: mock } : {}),
    async close() {
      stopWarming();
      await broker.close();
      await vendor?.close();
    },
  };
}
