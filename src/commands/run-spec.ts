/**
 * The run spec: what `vendor resume` needs besides the connection, left next to the store by a
 * paused `vendor run` so the same command can run again. It never holds a secret.
 *
 * Loaded only by a command's `run` (a dynamic import), like every back-end of the bundled
 * commands: `--help` never pays for the broker, the runner, the store or SQLite.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExtensionManifest } from '../manifest/types.js';
import type { ApprovalContext, Tier } from '../policy/index.js';

/** Everything to run the same command again, minus the connection. Written only for a paused run. */
export interface RunSpec {
  v: 1;
  runId: string;
  createdAt: string;
  /** the validated manifest itself (manifests hold no secrets), so a later edit of the file cannot change what resumes */
  extension: ExtensionManifest;
  cli: string;
  args: string[];
  stdin?: string;
  endpoint?: string;
  tier: {
    requested?: Tier;
    organizationCeiling: Tier;
    identity: 'assigned' | 'linked';
    assignment: string;
    assignmentAllow?: Tier;
  };
  context: ApprovalContext;
  deadlineMs: number;
}

/** `<store>.runs/`, mode 0700: one `<runId>.json` (mode 0600) per paused run. */
export function specDir(store: string): string {
  return `${store}.runs`;
}

function specFile(store: string, runId: string): string {
  if (!/^[A-Za-z0-9-]{1,64}$/.test(runId)) throw new Error(`run id '${runId}' cannot name a file`);
  return join(specDir(store), `${runId}.json`);
}

/** Write atomically (temp file, then rename) so a crash never leaves half a spec. */
export function saveRunSpec(store: string, spec: RunSpec): void {
  mkdirSync(specDir(store), { recursive: true, mode: 0o700 });
  const file = specFile(store, spec.runId);
  const tmp = `${file}.${randomUUID()}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(spec)}\n`, { mode: 0o600, flag: 'wx' });
  renameSync(tmp, file);
}

export function loadRunSpec(store: string, runId: string): RunSpec | undefined {
  let text: string;
  try {
    text = readFileSync(specFile(store, runId), 'utf8');
  } catch {
    return undefined;
  }
  let spec: RunSpec;
  try {
    spec = JSON.parse(text) as RunSpec;
  } catch {
    return undefined; // a damaged spec is no spec; JSON.parse's message would quote the file
  }
  return spec.v === 1 && spec.runId === runId ? spec : undefined;
}

export function removeRunSpec(store: string, runId: string): void {
  rmSync(specFile(store, runId), { force: true });
}
