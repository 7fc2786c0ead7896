/**
 * What a paused call needs to run again after a person approves it: the tool, the agent's
 * input and the host's options — never the connection (its secrets are read anew from the
 * configuration). Kept in memory, and for a store on disk also in `<store>.runs/<runId>.json`
 * (directory 0700, files 0600, written atomically) so a restarted daemon can still resume.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallOptions, ToolInput } from './types.js';

export interface CallSpec {
  v: 1;
  runId: string;
  toolId: string;
  input: ToolInput;
  options: Required<CallOptions>;
}

export interface SpecStore {
  save(spec: CallSpec): void;
  load(runId: string): CallSpec | undefined;
  remove(runId: string): void;
}

/** `<store>.runs`: where the specs of a file store live. */
export function specDirFor(store: string): string | undefined {
  return store === ':memory:' || store.includes('://') ? undefined : `${store}.runs`;
}

export function openSpecStore(store: string): SpecStore {
  const mem = new Map<string, CallSpec>();
  const dir = specDirFor(store);
  const file = (runId: string): string | undefined => (dir && /^[A-Za-z0-9-]{1,64}$/.test(runId) ? join(dir, `${runId}.json`) : undefined);
  return {
    save(spec) {
      mem.set(spec.runId, spec);
      const f = file(spec.runId);
      if (!f || !dir) return;
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const tmp = `${f}.${randomUUID()}.tmp`;
      writeFileSync(tmp, `${JSON.stringify(spec)}\n`, { mode: 0o600, flag: 'wx' });
      renameSync(tmp, f);
    },
    load(runId) {
      const hit = mem.get(runId);
      if (hit) return hit;
      const f = file(runId);
      if (!f) return undefined;
      try {
        const spec = JSON.parse(readFileSync(f, 'utf8')) as CallSpec;
        return spec.v === 1 && spec.runId === runId && Array.isArray(spec.input?.args) ? spec : undefined;
      } catch {
        return undefined; // missing or damaged: no spec (JSON.parse's message would quote the file)
      }
    },
    remove(runId) {
      mem.delete(runId);
      const f = file(runId);
      if (f) rmSync(f, { force: true });
    },
  };
}
