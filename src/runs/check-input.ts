/**
 * The runner's options and a run's input, checked where they enter (`createRunner`,
 * `runner.run`, `runner.resume`): a malformed or out-of-range field is refused with a
 * catalogue code naming it (`details.path`) and why (`details.reason`), before anything runs.
 * Shapes only: what a well-formed value means (an unknown CLI id, a connection kind with no
 * credential scheme) is refused later with its own code.
 *
 * @throws BrokerError RUNNER_OPTIONS_INVALID, RUN_INPUT_INVALID
 */
import { type OptionCode, optionInvalid } from '../broker/options.js';
import { TIER_SOURCES } from '../policy/tier.js';

/** A call's deadline ceiling: what the sandbox and the session are sized for. */
export const MAX_RUN_DEADLINE_MS = 270_000;

const TIERS = ['read', 'write'];
const CONTEXTS = ['agent-step', 'agent-step-never-asks', 'chat', 'api', 'tool-block', 'scheduled'];
const PROFILES = ['plain', 'isolated'];
const DIGEST = /^[0-9a-f]{64}$/;

type Fail = (path: string, reason: string) => never;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function failWith(code: OptionCode): Fail {
  return (path, reason) => {
    throw optionInvalid(code, path, reason);
  };
}

function oneOf(v: unknown, allowed: readonly string[], path: string, fail: Fail, optional = false): void {
  if (optional && v === undefined) return;
  if (typeof v !== 'string' || !allowed.includes(v))
    fail(path, `must be one of ${allowed.map((a) => `'${a}'`).join(', ')}`);
}

function text(v: unknown, path: string, fail: Fail, optional = false): void {
  if (optional && v === undefined) return;
  if (typeof v !== 'string' || v === '') fail(path, 'must be a non-empty string');
}

/** `createRunner`'s options. */
export function checkRunnerOptions(opts: unknown): void {
  const fail: Fail = failWith('RUNNER_OPTIONS_INVALID');
  if (!isObject(opts)) fail('options', 'must be an object');
  const b = opts['broker'];
  if (!isObject(b) || typeof b['openSession'] !== 'function')
    fail('broker', 'must be a broker (createBroker)');
  const s = opts['store'];
  if (!isObject(s) || typeof s['consumeApproved'] !== 'function')
    fail('store', 'must be a store (openStore)');
  if (opts['logger'] !== undefined && !isObject(opts['logger'])) fail('logger', 'must be a pino logger');
  if (opts['minterFor'] !== undefined && typeof opts['minterFor'] !== 'function')
    fail('minterFor', 'must be a function');
  if (opts['mint'] !== undefined && !isObject(opts['mint'])) fail('mint', 'must be an object');
}

/** `runner.run`'s (and `resume`'s) input. */
export function checkRunInput(input: unknown): void {
  const fail: Fail = failWith('RUN_INPUT_INVALID');
  if (!isObject(input)) fail('input', 'must be an object');
  const ext = input['extension'];
  if (!isObject(ext) || typeof ext['id'] !== 'string' || !Array.isArray(ext['clis']))
    fail('extension', 'must be a validated extension manifest (defineExtension)');
  text(input['cli'], 'cli', fail);
  const args = input['args'];
  if (!Array.isArray(args)) fail('args', 'must be an array of strings');
  args.forEach((a: unknown, i) => {
    if (typeof a !== 'string') fail(`args[${i}]`, 'must be a string');
  });
  const stdin = input['stdin'];
  if (stdin !== undefined && typeof stdin !== 'string' && !Buffer.isBuffer(stdin))
    fail('stdin', 'must be a string or a Buffer');
  const connection = input['connection'];
  if (!isObject(connection)) fail('connection', 'must be a connection object');
  if (connection['read'] !== undefined && typeof connection['read'] !== 'function')
    fail('connection.read', 'must be a function');
  text(input['endpoint'], 'endpoint', fail, true);

  const tier = input['tier'];
  if (!isObject(tier))
    fail('tier', 'must be { requested?, requestedBy?, organizationCeiling, assignmentAllow, identity }');
  oneOf(tier['requested'], TIERS, 'tier.requested', fail, true);
  oneOf(tier['requestedBy'], TIER_SOURCES, 'tier.requestedBy', fail, true);
  oneOf(tier['organizationCeiling'], TIERS, 'tier.organizationCeiling', fail);
  oneOf(tier['assignmentAllow'], TIERS, 'tier.assignmentAllow', fail);
  oneOf(tier['identity'], ['assigned', 'linked'], 'tier.identity', fail);

  const context = input['context'];
  if (!isObject(context)) fail('context', 'must be { kind, tool?, toolArgs? }');
  oneOf(context['kind'], CONTEXTS, 'context.kind', fail);
  text(context['tool'], 'context.tool', fail, true);
  if (context['toolArgs'] !== undefined && !isObject(context['toolArgs']))
    fail('context.toolArgs', 'must be an object');

  const digests = input['approvedRequestDigests'];
  if (digests !== undefined) {
    if (!Array.isArray(digests)) fail('approvedRequestDigests', 'must be an array of request digests');
    digests.forEach((d: unknown, i) => {
      if (typeof d !== 'string' || !DIGEST.test(d))
        fail(`approvedRequestDigests[${i}]`, 'must be 64 lower-case hex digits');
    });
  }
  const runId = input['runId'];
  if (runId !== undefined && (typeof runId !== 'string' || runId === '' || runId.length > 128))
    fail('runId', 'must be a string of 1 to 128 characters');
  const deadline = input['deadlineMs'];
  if (deadline !== undefined) {
    if (typeof deadline !== 'number' || !Number.isSafeInteger(deadline) || deadline <= 0)
      fail('deadlineMs', 'must be a positive whole number of milliseconds');
    if (deadline > MAX_RUN_DEADLINE_MS) fail('deadlineMs', `must be at most ${MAX_RUN_DEADLINE_MS} (270 s)`);
  }
  const image = input['image'];
  if (image !== undefined) {
    if (!isObject(image)) fail('image', 'must be { name, executable, profile, … }');
    text(image['name'], 'image.name', fail);
    text(image['executable'], 'image.executable', fail);
    oneOf(image['profile'], PROFILES, 'image.profile', fail);
    for (const k of ['readOnlyPaths', 'hiddenPaths']) {
      const paths = image[k];
      if (paths !== undefined && !(Array.isArray(paths) && paths.every((p) => typeof p === 'string')))
        fail(`image.${k}`, 'must be an array of paths');
    }
    if (image['verify'] !== undefined && typeof image['verify'] !== 'function')
      fail('image.verify', 'must be a function');
  }
}
