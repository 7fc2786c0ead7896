/**
 * Micro-bench for the sandbox alone (src/sandbox/run.ts): `runSandboxed` in the plain and the
 * isolated profile, interleaved, for `/bin/true` (start-up and teardown only: the call's
 * directories, bwrap and the launcher, the plain profile's /proc sweep) and for real
 * `gh api user` through a broker session to the embedded GitHub-like vendor (adds the relay
 * and the bridge on every byte). No runner, policy or store: the difference between the two
 * profiles is the isolated profile's own cost. The isolated cases run with the launcher the
 * probe picks here (perl where it runs) and again with the node launcher a host without perl
 * gets. One warm-up round, then medians.
 * Run: `npx tsx bench/micro/sandbox-profiles.ts [rounds=9]`.
 */
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createBroker } from '../../src/broker/broker.js';
import { githubVendor } from '../../src/mockvendor/github.js';
import { startMockVendor } from '../../src/mockvendor/server.js';
import { isolationUnavailable, runSandboxed } from '../../src/sandbox/index.js';
import type { SandboxProfile } from '../../src/sandbox/types.js';
import { median } from '../lib/stats.js';

const TOKEN = 'gho_BenchSandboxProfilesToken0000000001';
const GH = '/usr/bin/gh';
const rounds = Number(process.argv[2] ?? 9);
const why = await isolationUnavailable();
if (why) throw new Error(`the isolated profile cannot run here: ${why}`);
if (!existsSync(GH)) throw new Error(`${GH} is missing (Debian package gh)`);

const vendor = await startMockVendor(githubVendor({ token: TOKEN }));
const broker = await createBroker({
  upstream: { ca: vendor.caPem, resolve: vendor.resolve, allowAddresses: ['127.0.0.0/8'] },
});
const session = broker.openSession({
  egress: ['api.github.com'],
  credentials: { authorizationFor: () => `token ${TOKEN}` },
  limits: { deadlineMs: 270_000, maxRequests: 100_000 },
});

/** A perl that does not exist: the probe then picks the node launcher. */
const NO_PERL = '/nonexistent/clibroker-perl';
const cases: [string, SandboxProfile, string, string[], string?][] = [
  ['true, plain', 'plain', '/bin/true', []],
  ['true, isolated', 'isolated', '/bin/true', []],
  ['true, isolated (node launcher)', 'isolated', '/bin/true', [], NO_PERL],
  ['gh api user, plain', 'plain', GH, ['api', 'user']],
  ['gh api user, isolated', 'isolated', GH, ['api', 'user']],
  ['gh api user, isolated (node launcher)', 'isolated', GH, ['api', 'user'], NO_PERL],
];
const load0 = loadavg();
const fig = new Map<string, number[]>();
try {
  for (let i = 0; i <= rounds; i++) {
    for (const [name, image, entrypoint, args, perl] of cases) {
      const t0 = performance.now();
      const r = await runSandboxed({
        entrypoint,
        args,
        image,
        strictProfile: true,
        session,
        deadlineMs: 60_000,
        childEnv: { cli: { env: { GH_TOKEN: 'placeholder' } } },
        ...(perl ? { perl } : {}),
      });
      const ms = performance.now() - t0;
      if (r.exitCode !== 0) throw new Error(`${name} exited ${r.exitCode}: ${r.stderr.slice(0, 400)}`);
      if (i > 0) fig.set(name, [...(fig.get(name) ?? []), ms]);
    }
  }
} finally {
  session.close();
  await broker.close();
  await vendor.close();
}
const m = (k: string): number => median(fig.get(k)!);
console.log(
  `runSandboxed, ${rounds} rounds, load at start ${load0.map((l) => l.toFixed(2)).join(' ')}, at end ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.table(cases.map(([name]) => ({ case: name, 'median ms': m(name).toFixed(1) })));
console.log(
  `isolated − plain: true ${(m('true, isolated') - m('true, plain')).toFixed(1)} ms, gh api user ${(
    m('gh api user, isolated') - m('gh api user, plain')
  ).toFixed(1)} ms`,
);
console.log(
  `node launcher − probe's launcher: true ${(m('true, isolated (node launcher)') - m('true, isolated')).toFixed(1)} ms, gh api user ${(
    m('gh api user, isolated (node launcher)') - m('gh api user, isolated')
  ).toFixed(1)} ms`,
);
