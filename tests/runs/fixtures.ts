/**
 * Shared fixtures for governed runs: the embedded GitHub-like vendor, a broker trusting it,
 * an in-memory store and a runner, plus manifests modelled on the real CLIs.
 */
import { type Broker, createBroker } from '../../src/broker/broker.js';
import type { AuditEvent, BrokerOptions } from '../../src/broker/types.js';
import type { Connection } from '../../src/credentials/types.js';
import { defineExtension } from '../../src/manifest/define.js';
import * as examples from '../../src/manifest/examples.js';
import type { ExtensionManifest } from '../../src/manifest/types.js';
import { githubVendor } from '../../src/mockvendor/github.js';
import { type MockVendor, startMockVendor } from '../../src/mockvendor/server.js';
import { createRunner, type Runner, type RunInput } from '../../src/runs/index.js';
import { openSqliteStore } from '../../src/store/index.js';
import { leakGuard } from '../helpers/leaks.js';
import type { Store } from '../../src/store/types.js';

export const REAL_TOKEN = 'gho_RealTokenHeldOnlyByClibroker0001';

/** The example github extension: gh and curl on the plain profile. */
export const githubExtension: ExtensionManifest = defineExtension(examples.githubExtension());

export const githubConnection: Connection = { kind: 'oauth_access_token', accessToken: REAL_TOKEN };

export interface RunFixture {
  vendor: MockVendor;
  broker: Broker;
  store: Store;
  runner: Runner;
  events: AuditEvent[];
  input(cli: string, args: string[], over?: Partial<RunInput>): RunInput;
}

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** Extra per-run tokens the vendor accepts (for isolation tests): `run-token-<i>`-style, secret-shaped. */
export const runToken = (i: number): string => `gho_PerRunToken${String(i).padStart(4, '0')}abcdefghijklmnop`;

export async function runFixture(
  t: Teardown,
  opts: { storePath?: string; extraTokens?: number; limits?: BrokerOptions['limits'] } = {},
): Promise<RunFixture> {
  const extra = Array.from({ length: opts.extraTokens ?? 0 }, (_, i) => runToken(i));
  const vendor = await startMockVendor(githubVendor({ token: [REAL_TOKEN, ...extra] }));
  const events: AuditEvent[] = [];
  const guard = leakGuard([REAL_TOKEN, ...extra]);
  const broker = await createBroker({
    upstream: { ca: vendor.caPem, resolve: vendor.resolve, allowAddresses: ['127.0.0.0/8'] },
    ...(opts.limits ? { limits: opts.limits } : {}),
    logger: guard.logger,
    onAudit: (e) => {
      events.push(e);
      guard.onAudit(e);
    },
  });
  const store = openSqliteStore(opts.storePath ?? ':memory:');
  const runner = createRunner({ broker, store, logger: guard.logger });

  t.teardown(async () => {
    await broker.close();
    await vendor.close();
    // The durable store is a sink too: its events must be as clean as the log.
    for (const e of await store.listEvents({ limit: 10_000 })) guard.onAudit(e.event as never);
    await store.close();
    guard.assertClean();
  });
  return {
    vendor,
    broker,
    store,
    runner,
    events,
    input: (cli, args, over = {}) => ({
      extension: githubExtension,
      cli,
      args,
      connection: githubConnection,
      tier: {
        requested: 'read',
        organizationCeiling: 'write',
        assignmentAllow: 'write',
        identity: 'assigned',
      },
      context: { kind: 'agent-step', tool: `${cli}_cli`, toolArgs: { args } },
      deadlineMs: 60_000,
      ...over,
    }),
  };
}

export const atWrite = {
  tier: { requested: 'write', organizationCeiling: 'write', assignmentAllow: 'write', identity: 'assigned' },
} as const;
