import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import type { OperatorConfig } from '../../src/config/types.js';
import type { BrokerError } from '../../src/errors.js';
import { createHost, type Host } from '../../src/host/index.js';
import { curlCli, githubExtension } from '../../src/manifest/examples.js';
import type { ExtensionManifest } from '../../src/manifest/types.js';
import { githubVendor } from '../../src/mockvendor/github.js';
import { type MockVendor, startMockVendor } from '../../src/mockvendor/server.js';
import { startHttpServer } from '../../src/serve/http.js';
import { configDir } from '../helpers/config.js';

// A host whose SQLite store lives on a small tmpfs that fills up in the middle of a call:
// real curl in the isolated profile, the real broker, the mock GitHub vendor. The vendor
// fills the filesystem while it answers one request, so the store fails between two
// requests of the same CLI run.

const TOKEN = 'ghp_StoreFullTestToken00000000000000001';

const github: ExtensionManifest = githubExtension([curlCli({ image: 'curl' })]);

const root = process.getuid?.() === 0;
const skip = root ? false : 'mounting a size-limited tmpfs needs root (CI runs these as root)';
if (skip) console.error(`# SKIPPING the full-store tests: ${skip}`);

/** A mounted tmpfs of `size`, unmounted and removed in teardown. */
function smallFs(t: { teardown(fn: () => unknown): void }, size: string) {
  const dir = mkdtempSync(join(tmpdir(), 'clibroker-full-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir]);
  t.teardown(() => {
    execFileSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  const ballast = join(dir, 'ballast');
  return {
    dir,
    /** writes until the filesystem has no byte left */
    fill() {
      const fd = openSync(ballast, 'a');
      const chunk = Buffer.alloc(64 * 1024, 1);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
        // the last pages, smaller than a chunk
        try {
          for (;;) writeSync(fd, chunk, 0, 512);
        } catch {}
      } finally {
        closeSync(fd);
      }
    },
    free() {
      unlinkSync(ballast);
    },
  };
}

async function rejection(p: Promise<unknown>): Promise<BrokerError> {
  try {
    await p;
  } catch (e) {
    return e as BrokerError;
  }
  throw new Error('expected the call to fail');
}

interface Fixture {
  host: Host;
  vendor: MockVendor;
  fs: ReturnType<typeof smallFs>;
}

/** A host over a store on a 4 MiB tmpfs; a request with `?fill` fills it while the vendor answers. */
async function fixture(t: { teardown(fn: () => unknown): void }): Promise<Fixture> {
  const fs = smallFs(t, '4m');
  const answer = githubVendor({ token: TOKEN });
  const vendor = await startMockVendor((req) => {
    if (req.query.has('fill')) fs.fill();
    return answer(req);
  });
  const dir = configDir();
  const config: OperatorConfig = {
    version: 1,
    conformance: 'optional',
    organization: { ceiling: 'write' },
    images: { curl: dir.image('/usr/bin/curl') },
    extensions: {
      github: {
        ...dir.manifest(github),
        connection: { kind: 'oauth_access_token', accessToken: dir.secret('github', TOKEN) },
      },
    },
    store: join(fs.dir, 'store.db'),
    deadlineSeconds: 60,
    upstream: dir.upstream(vendor, ['api.github.com']),
  };
  const host = await createHost(await loadConfig(dir.write(config)));
  // teardowns run in order: the host closes before the filesystem under its store goes
  t.teardown(async () => {
    await host.close();
    await vendor.close();
    dir.remove();
  });
  return { host, vendor, fs };
}

const url = (q: string) => `https://api.github.com/user?${q}`;

t.test(
  'the store fills mid-call: no request after the failure, the call fails, new calls wait for the store',
  { skip },
  async (t) => {
    t.plan(12);
    const f = await fixture(t);
    const warm = await f.host.runTool('curl_cli', { args: ['-sS', url('warm')] });
    t.equal(warm.exitCode, 0, 'a call before the store fills succeeds');

    const seen = f.vendor.log.length;
    const call = f.host.runTool('curl_cli', {
      args: ['-sS', '-w', '%{http_code} ', url('first'), url('fill'), url('after=1'), url('after=2')],
    });
    const err = await rejection(call);
    t.same(
      f.vendor.log.slice(seen).map((r) => r.query.toString()),
      ['first=', 'fill='],
      'the vendor sees no request after the store failed',
    );
    t.equal(err.code, 'STORE_WRITE_FAILED', 'the call fails with the store code, not completed');
    t.ok(Number(err.details?.['lostEvents']) >= 1, 'the failure counts the events that were lost');
    t.match(err.message, /\d+ audit events? of this call (was|were) not stored/);
    t.equal(
      String(err.details?.['stdout']).match(/"policyCode":"STORE_WRITE_FAILED"}}}422 /g)?.length,
      2,
      'both later requests were refused to the CLI with a 4xx naming the store code',
    );
    const runId = String(err.details?.['runId']);

    const health = await rejection(f.host.checkStore());
    t.equal(health.code, 'STORE_WRITE_FAILED', 'the health check says the store refuses writes');
    const before = f.vendor.log.length;
    const refused = await rejection(f.host.runTool('curl_cli', { args: ['-sS', url('while-full')] }));
    t.equal(refused.code, 'STORE_WRITE_FAILED', 'a new call is refused while the store cannot write');
    t.equal(f.vendor.log.length, before, 'the refused call sent nothing');

    f.fs.free();
    await f.host.checkStore();
    t.pass('with space again, the health check writes what was owed and passes');
    const again = await f.host.runTool('curl_cli', { args: ['-sS', url('freed')] });
    t.equal(again.exitCode, 0, 'with space again, a call succeeds without a restart');
    const failed = await f.host.store.listEvents({ runId, type: 'extension.execution.failed' });
    t.match(
      failed.map((e) => e.event),
      [{ code: 'STORE_WRITE_FAILED', lostEvents: Number(err.details?.['lostEvents']) }],
      'the failed call is on record once the store writes again, with the count of what was lost',
    );
  },
);

t.test(
  'the store fills during one call: the other calls running send nothing more either',
  { skip },
  async (t) => {
    const f = await fixture(t);
    // X asks for six URLs, two a second; once its first is in, Y's request fills the store
    const xs = Array.from({ length: 6 }, (_, i) => url(`x=${i}`));
    const x = f.host.runTool('curl_cli', { args: ['-sS', '--rate', '2/s', '-w', '%{http_code} ', ...xs] });
    while (!f.vendor.log.some((r) => r.query.has('x'))) await new Promise((r) => setTimeout(r, 20));
    const y = await rejection(f.host.runTool('curl_cli', { args: ['-sS', url('fill'), url('y-after')] }));
    t.equal(y.code, 'STORE_WRITE_FAILED', 'the call whose write failed fails with the store code');
    const filledAt = f.vendor.log.findIndex((r) => r.query.has('fill'));
    const xErr = await rejection(x);
    const afterFill = f.vendor.log.slice(filledAt + 1).map((r) => r.query.toString());
    t.same(afterFill, [], 'no request of either call reached the vendor after the store filled');
    t.match(
      String(xErr.details?.['stdout']),
      /"policyCode":"STORE_WRITE_FAILED"/,
      'the other call was refused to the CLI with the store code',
    );
    t.ok(
      f.vendor.log.filter((r) => r.query.has('x')).length < xs.length,
      'the other call still had requests to send after the store filled',
    );
  },
);

t.test(
  "serve's /healthz: 503 with the store's code while its audit writes fail, 200 once they pass",
  { skip },
  async (t) => {
    const f = await fixture(t);
    const server = await startHttpServer(f.host, f.host.store, {
      host: '127.0.0.1',
      port: 0,
      tokens: async () => ({ reviewers: [] }),
      approvalTimeoutMs: 60_000,
      mcp: { cliTier: 'read', context: 'agent-step' },
    });
    t.teardown(() => server.close());
    const health = async () => {
      const r = await fetch(`${server.url}/healthz`);
      return { status: r.status, body: (await r.json()) as { ok: boolean; error?: { code: string } } };
    };
    t.same(await health(), { status: 200, body: { ok: true, result: { status: 'ok', store: 'ok' } } });
    await rejection(f.host.runTool('curl_cli', { args: ['-sS', url('fill'), url('after')] }));
    t.match(
      await health(),
      { status: 503, body: { ok: false, error: { code: 'STORE_WRITE_FAILED' } } },
      'the store still answers reads, but a load balancer is told this replica starts no call',
    );
    f.fs.free();
    t.match(await health(), { status: 200, body: { ok: true } }, 'the check itself writes what was owed');
  },
);
