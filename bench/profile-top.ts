/**
 * Summarises a V8 .cpuprofile (from `npm run bench -- --profile`): the top frames by self
 * time and by total (inclusive) time, so a missed goal can be traced to code.
 *
 *   tsx bench/profile-top.ts <file.cpuprofile> [count] [--window <rounds.json>]
 *
 * --window keeps the samples between its `from` and `to` (µs of CLOCK_MONOTONIC, the
 * profile's clock: bench/agent-paths.ts writes one for its measured rounds) and adds a column
 * per round when it names `rounds`.
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const argv = process.argv.slice(2);
const w = argv.indexOf('--window');
const window: { from: number; to: number; rounds?: number } | undefined =
  w === -1 ? undefined : JSON.parse(readFileSync(argv.splice(w, 2)[1]!, 'utf8'));
const [file, countArg] = argv;
if (!file)
  throw new Error('usage: tsx bench/profile-top.ts <file.cpuprofile> [count] [--window <rounds.json>]');
const count = Number(countArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

function key(n: Node): string {
  const f = n.callFrame;
  const url = f.url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '')
    .replace(/^.*\/bench\/\.cache\/dist\//, 'bundle:');
  return `${f.functionName || '(anonymous)'} ${url ? `${url}:${f.lineNumber + 1}` : ''}`.trim();
}

const self = new Map<string, number>();
const total = new Map<string, number>();
let all = 0;
let idle = 0;
let at = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  const dt = profile.timeDeltas[i] ?? 0;
  at += dt;
  if (window && (at < window.from || at > window.to)) continue;
  const node = byId.get(profile.samples[i]!)!;
  all += dt;
  const k = key(node);
  if (k.startsWith('(idle)')) {
    idle += dt;
    continue;
  }
  self.set(k, (self.get(k) ?? 0) + dt);
  const seen = new Set<string>();
  for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
    const kk = key(byId.get(id)!);
    if (seen.has(kk)) continue;
    seen.add(kk);
    total.set(kk, (total.get(kk) ?? 0) + dt);
  }
}

const busy = all - idle;
const rounds = window?.rounds;
const perRound = (us: number): string =>
  rounds ? `${(us / 1000 / rounds).toFixed(2).padStart(7)} ms/round  ` : '';
const show = (title: string, m: Map<string, number>): void => {
  console.log(
    `\n${title} (of ${(busy / 1000).toFixed(0)} ms busy, ${(idle / 1000).toFixed(0)} ms idle${rounds ? `, ${rounds} rounds` : ''})`,
  );
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, count))
    console.log(
      `${((100 * v) / busy).toFixed(1).padStart(5)}%  ${(v / 1000).toFixed(0).padStart(6)} ms  ${perRound(v)}${k}`,
    );
};
show('self time', self);
show('total time', total);
