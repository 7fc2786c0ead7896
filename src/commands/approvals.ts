/**
 * `clibroker approvals list|show|approve|reject`: the pending requests of paused runs, in
 * the store. Approve and reject are a person's decision: `agent manifest` leaves
 * them out of the tool list it gives agents (docs/cli.md). The store loads only when a
 * command runs. A person reads what is printed, so an approval is shown as on the review
 * page: `path` is the whole target, path and query; the agent's arguments and stdin are
 * redacted (secret-shaped substrings replaced); every text field has its invisible and
 * reordering characters written as escapes (`\u202E`).
 */
import type { Approval } from '../store/types.js';
import { defineTool } from '../cli/define.js';
import { configParam, limitParam, storeParam } from './common.js';

const APPROVAL_SHAPE =
  "{id, runId, status: 'pending'|'approved'|'rejected'|'consumed', digest, method, host, path, graphqlOperation?, bodyPreview?, tool, toolArgs, createdAt, decidedAt?, decidedBy?, consumedAt?}";
const EXAMPLE_ID = '5f0c2a9e-1111-4222-8333-944455556666';

async function store() {
  const [location, decision, mutation, visible, shape] = await Promise.all([
    import('./store-flag.js'),
    import('./approval-decide.js'),
    import('./mutation.js'),
    import('../audit/visible.js'),
    import('../audit/secret-shape.js'),
  ]);
  const show: Show = (text, opts) => visible.showInvisible(shape.redactSecrets(text), opts);
  return { ...location, ...decision, ...mutation, shown: shownWith(show) };
}

/** Redacted (the agent's input is kept as it was given), then escaped. */
type Show = (text: string, opts?: { multiline?: boolean }) => string;

/** Every string inside the agent's input redacted and escaped; stdin keeps its lines. */
function deep(x: unknown, show: Show, multiline = false): unknown {
  if (typeof x === 'string') return show(x, { multiline });
  if (Array.isArray(x)) return x.map((y) => deep(y, show));
  if (typeof x === 'object' && x !== null)
    return Object.fromEntries(Object.entries(x).map(([k, v]) => [show(k), deep(v, show, k === 'stdin')]));
  return x;
}

/** An approval as a person reads it: the same fields, the text ones with visible escapes. */
function shownWith(show: Show) {
  return (a: Approval): Approval => ({
    ...a,
    method: show(a.method),
    host: show(a.host),
    path: show(a.path),
    ...(a.graphqlOperation !== undefined ? { graphqlOperation: show(a.graphqlOperation) } : {}),
    ...(a.bodyPreview !== undefined ? { bodyPreview: show(a.bodyPreview, { multiline: true }) } : {}),
    tool: show(a.tool),
    toolArgs: deep(a.toolArgs, show),
    ...(a.decidedBy !== undefined ? { decidedBy: show(a.decidedBy) } : {}),
  });
}

export const approvalsList = defineTool({
  namespace: 'approvals',
  name: 'list',
  cliAliases: ['ls'],
  description: 'List approvals (requests of paused runs waiting for, or decided by, a person), oldest first.',
  parameters: {
    status: {
      type: 'enum',
      values: ['pending', 'approved', 'rejected', 'consumed'],
      optional: true,
      describe: 'only approvals in this state',
    },
    run: { type: 'string', optional: true, describe: 'only approvals of this run id' },
    limit: limitParam,
    store: storeParam,
    config: configParam,
  },
  examples: [{ params: { status: 'pending' }, comment: 'what waits for a person' }],
  outputShape: `{approvals: ${APPROVAL_SHAPE}[]}`,
  async run(p) {
    const host = await store();
    return host.withStore(host.storeFlag(p), false, async (s) => ({
      approvals: (
        await s.listApprovals({
          limit: p.limit,
          ...(p.status ? { status: p.status } : {}),
          ...(p.run ? { runId: p.run } : {}),
        })
      ).map(host.shown),
    }));
  },
});

export const approvalsShow = defineTool({
  namespace: 'approvals',
  name: 'show',
  description:
    'Show one approval: the request (method, host, path with its query, GraphQL operation, body preview), the tool and its arguments, its state. Invisible characters are shown as escapes (\\u202E).',
  parameters: {
    id: { type: 'string', describe: 'the approval id' },
    store: storeParam,
    config: configParam,
  },
  examples: [{ params: { id: EXAMPLE_ID }, comment: 'what exactly would be approved' }],
  outputShape: APPROVAL_SHAPE,
  async run(p) {
    const host = await store();
    return host.withStore(host.storeFlag(p), false, async (s) => {
      const a = await s.getApproval(p.id);
      return a ? host.shown(a) : host.approvalNotFound(p.id, 'id');
    });
  },
});

function decision(to: 'approve' | 'reject') {
  const past = to === 'approve' ? 'approved' : 'rejected';
  return defineTool({
    namespace: 'approvals',
    name: to,
    description:
      to === 'approve'
        ? "Approve a pending request (a person's decision); then 'vendor resume --approval <id>' runs the command again once with that request allowed."
        : 'Reject a pending request; the approval can never be approved or run afterwards.',
    parameters: {
      id: { type: 'string', describe: 'the approval id' },
      by: { type: 'string', describe: 'who decides (recorded with the approval), e.g. an e-mail address' },
      store: storeParam,
      config: configParam,
    },
    examples: [
      {
        params: { id: EXAMPLE_ID, by: 'alice@example.com' },
        comment: `${to} as alice`,
        output: { status: past, updatedAt: '2025-01-01T12:00:00.000Z', approvalId: EXAMPLE_ID },
      },
    ],
    outputShape: `{status: '${past}', updatedAt: string, approvalId: string, runId: string, approval: ${APPROVAL_SHAPE}}`,
    async run(p) {
      const host = await store();
      return host.withStore(host.storeFlag(p), false, async (s) => {
        const a = await host.decideApproval(s, p.id, to, p.by);
        // dated by the store's decision: a decided approval without its time is refused
        return host.mutationResult(past, a.decidedAt, {
          approvalId: a.id,
          runId: a.runId,
          approval: host.shown(a),
        });
      });
    },
  });
}

export const approvalsApprove = decision('approve');
export const approvalsReject = decision('reject');
