/**
 * Summarises a V8 .cpuprofile (from `npm run bench -- --profile`): the top frames by self
 * time and by total (inclusive) time, so a missed goal can be traced to code.
 *
 *   tsx bench/profile-top.ts <file.cpuprofile> [count]
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const [file, countArg] = process.argv.slice(2);
if (!file) throw new Error('usage: tsx bench/profile-top.ts <file.cpuprofile> [count]');
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
for (let i = 0; i < profile.samples.length; i++) {
  const dt = profile.timeDeltas[i] ?? 0;
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
const show = (title: string, m: Map<string, number>): void => {
  console.log(`\n${title} (of ${(busy / 1000).toFixed(0)} ms busy, ${(idle / 1000).toFixed(0)} ms idle)`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, count))
    console.log(
      `${((100 * v) / busy).toFixed(1).padStart(5)}%  ${(v / 1000).toFixed(0).padStart(6)} ms  ${k}`,
    );
};
show('self time', self);
show('total time', total);
