/**
 * The Platform API's OpenAPI 3.1 document, served at /openapi.json and shipped as
 * schemas/openapi.json (`npm run docs:openapi` writes it; a test keeps the two equal).
 */
import { SANDBOX_LIMITS } from '../sandbox/types.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const ok = (result: unknown) => ({
  type: 'object',
  required: ['ok', 'result'],
  properties: { ok: { const: true }, result },
});
const failures = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((s) => [
      String(s),
      { description: 'a coded failure', content: { 'application/json': { schema: ref('Failure') } } },
    ]),
  );
const json = (schema: unknown, description = 'success') => ({
  description,
  content: { 'application/json': { schema } },
});
const idParam = {
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' },
};
const reviewerOrExecutor = [{ reviewer: [] }, { executor: [] }];

export const OPENAPI = {
  openapi: '3.1.0',
  info: {
    title: 'clibroker Platform API',
    version: '1',
    description:
      "The configured <id>_cli tools and their approvals over HTTP. Every answer is {ok: true, result} or {ok: false, error: {code, message, details?, retry}}; clients read error.code (docs/errors.md), not the status. The agent's input is {args, stdin?}; cliTier and context are the calling platform's. Every route answers only requests that name this server: a Host that is not its bound address or serve.publicUrl is 421, a browser Origin of another site 403. Too many wrong tokens from one address (or from all) are 429 SERVE_RATE_LIMITED with Retry-After.",
  },
  servers: [{ url: 'http://127.0.0.1:8787' }],
  components: {
    securitySchemes: {
      executor: { type: 'http', scheme: 'bearer', description: 'serve.executorToken: runs tools' },
      reviewer: {
        type: 'http',
        scheme: 'bearer',
        description: 'a token of serve.reviewers: decides approvals, cannot run tools',
      },
    },
    schemas: {
      ToolInput: {
        type: 'object',
        additionalProperties: false,
        required: ['args'],
        properties: {
          args: {
            type: 'array',
            maxItems: SANDBOX_LIMITS.maxArgs,
            items: { type: 'string', description: `at most ${SANDBOX_LIMITS.maxArgBytes} bytes in UTF-8` },
          },
          stdin: { type: 'string', description: `at most ${SANDBOX_LIMITS.maxStdinBytes} bytes in UTF-8` },
        },
      },
      ExecuteRequest: {
        type: 'object',
        additionalProperties: false,
        required: ['toolId', 'input'],
        properties: {
          toolId: { type: 'string', minLength: 1, maxLength: 256, description: 'gh_cli or github:cli:gh' },
          input: ref('ToolInput'),
          cliTier: {
            enum: ['read', 'write'],
            default: 'read',
            description:
              'capped at serve.executorMaxTier (default read): a write asked for above it runs at read, with cliTierReason executor-max-tier',
          },
          context: {
            enum: ['agent-step', 'agent-step-never-asks', 'chat', 'api', 'tool-block', 'scheduled'],
            default: 'agent-step',
            description: 'agent-step: a destructive request holds the call until a person decides',
          },
        },
      },
      ToolOutput: {
        type: 'object',
        required: ['exitCode', 'stdout', 'stderr', 'truncated', 'runId', 'cliTier', 'cliTierReason'],
        properties: {
          exitCode: { type: 'integer' },
          stdout: { type: 'string' },
          stderr: { type: 'string' },
          truncated: { type: 'boolean' },
          runId: { type: 'string' },
          cliTier: { enum: ['read', 'write'] },
          cliTierReason: { type: 'string' },
          outlivedRefusals: {
            type: 'array',
            description:
              'requests refused that the CLI outlived (a host outside egress it did not need): the call still completed',
            items: {
              type: 'object',
              required: ['code', 'method', 'host', 'path'],
              properties: {
                code: { type: 'string' },
                method: { type: 'string' },
                host: { type: 'string' },
                path: { type: 'string' },
              },
            },
          },
        },
      },
      Tool: {
        type: 'object',
        required: ['id', 'name', 'description', 'inputSchema'],
        properties: {
          id: { type: 'string' },
          name: { type: 'string' },
          description: { type: 'string' },
          inputSchema: { type: 'object' },
        },
      },
      Approval: {
        type: 'object',
        description:
          'an approval as a person reads it: every text field has the characters that draw nothing or reorder text (controls, format characters such as U+202E) written as escapes, \\u202E',
        required: ['id', 'status', 'createdAt', 'runId', 'request', 'tool', 'args'],
        properties: {
          id: { type: 'string' },
          status: { enum: ['pending', 'approved', 'rejected', 'consumed', 'expired', 'withdrawn'] },
          createdAt: { type: 'string', format: 'date-time' },
          decidedAt: { type: 'string', format: 'date-time' },
          decidedBy: { type: 'string' },
          consumedAt: { type: 'string', format: 'date-time' },
          waiting: {
            const: true,
            description:
              'a call on one of the servers over the store waits for this pending approval now: it runs once the approval is decided',
          },
          runId: { type: 'string' },
          request: {
            type: 'object',
            required: ['method', 'host', 'path'],
            properties: {
              method: { type: 'string' },
              host: { type: 'string' },
              path: {
                type: 'string',
                description:
                  'the whole target, path and query; secret-shaped path segments and query values read {redacted}',
              },
              graphqlOperation: { type: 'string' },
              bodyPreview: { type: 'string', description: 'redacted and bounded' },
            },
          },
          tool: { type: 'string' },
          args: { type: 'array', items: { type: 'string' }, description: 'redacted' },
          stdinPreview: { type: 'string', description: 'redacted, at most 2048 characters' },
          stdinBytes: { type: 'integer' },
        },
      },
      Failure: {
        type: 'object',
        required: ['ok', 'error'],
        properties: {
          ok: { const: false },
          error: {
            type: 'object',
            required: ['code', 'message', 'retry'],
            properties: {
              // not an enum: the catalogue grows (codes are append-only), and a client must read unknown ones
              code: { type: 'string', pattern: '^[A-Z][A-Z0-9_]*$', description: 'a code of docs/errors.md' },
              message: { type: 'string' },
              details: {
                type: 'object',
                description:
                  "the failure's data: policyCode (only for POLICY_BLOCKED: a tier or egress decision), approvalId, request {method, host, path}, the run's output and tier; outcomeUnknown: true when the call may have changed something before it failed, with unknownOutcomes [{method, host, path}] naming writes to check with a read before repeating",
              },
              retry: { type: 'boolean' },
            },
          },
        },
      },
    },
  },
  paths: {
    '/healthz': {
      get: {
        summary:
          'readiness; no token: 200 when this replica can serve calls (its store answers), 503 STORE_UNAVAILABLE when it cannot, so a load balancer stops sending it calls',
        security: [],
        responses: {
          '200': json(
            ok({ type: 'object', properties: { status: { const: 'ok' }, store: { const: 'ok' } } }),
          ),
          ...failures(503),
        },
      },
    },
    '/v1/tools': {
      get: {
        summary: 'the offered tools',
        security: reviewerOrExecutor,
        responses: {
          '200': json(ok({ type: 'object', properties: { tools: { type: 'array', items: ref('Tool') } } })),
          ...failures(401, 403),
        },
      },
    },
    '/v1/tools/execute': {
      post: {
        summary:
          'run a tool; in agent-step a destructive request holds the call until a person decides (then the command re-runs once), it is rejected (EXEC_ACTION_CONFIRMATION_DECLINED) or the approval times out (SERVE_APPROVAL_TIMEOUT)',
        security: [{ executor: [] }],
        requestBody: { required: true, content: { 'application/json': { schema: ref('ExecuteRequest') } } },
        responses: {
          '200': json(ok(ref('ToolOutput'))),
          ...failures(400, 401, 403, 404, 413, 422, 500, 503),
        },
      },
    },
    '/v1/approvals': {
      get: {
        summary: 'approvals, newest or oldest first',
        security: reviewerOrExecutor,
        parameters: [
          { name: 'status', in: 'query', schema: { enum: ['pending', 'approved', 'rejected', 'consumed'] } },
          { name: 'runId', in: 'query', schema: { type: 'string' } },
          {
            name: 'limit',
            in: 'query',
            schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
          },
          { name: 'order', in: 'query', schema: { enum: ['oldest', 'newest'] } },
        ],
        responses: {
          '200': json(
            ok({ type: 'object', properties: { approvals: { type: 'array', items: ref('Approval') } } }),
          ),
          ...failures(400, 401, 403),
        },
      },
    },
    '/v1/approvals/{id}': {
      get: {
        summary: 'one approval',
        security: reviewerOrExecutor,
        parameters: [idParam],
        responses: { '200': json(ok(ref('Approval'))), ...failures(400, 401, 403, 404) },
      },
    },
    '/v1/approvals/{id}/approve': {
      post: {
        summary:
          'approve a pending approval (exactly one of concurrent decisions wins; the others get APPROVAL_NOT_PENDING)',
        security: [{ reviewer: [] }],
        parameters: [idParam],
        responses: { '200': json(ok(ref('Approval'))), ...failures(400, 401, 403, 404, 409) },
      },
    },
    '/v1/approvals/{id}/reject': {
      post: {
        summary: 'reject a pending approval',
        security: [{ reviewer: [] }],
        parameters: [idParam],
        responses: { '200': json(ok(ref('Approval'))), ...failures(400, 401, 403, 404, 409) },
      },
    },
    '/v1/approvals/{id}/resume': {
      post: {
        summary:
          'run an approved call again whose wait ended without it (the replica that held it stopped or died, or its client went away): the command re-runs once at tier write with that one request approved; any replica over the store can resume it, and the vendor sees the request once. Needs serve.executorMaxTier write (else POLICY_BLOCKED, CLI_REQUEST_TIER_DENIED); a pending or consumed approval is APPROVAL_NOT_PENDING',
        security: [{ executor: [] }],
        parameters: [idParam],
        responses: {
          '200': json(ok(ref('ToolOutput'))),
          ...failures(400, 401, 403, 404, 409, 422, 500, 503),
        },
      },
    },
    '/v1/audit': {
      get: {
        summary: 'audit events, filtered and paged (pass next as after for the next page)',
        security: reviewerOrExecutor,
        parameters: [
          { name: 'runId', in: 'query', schema: { type: 'string' } },
          { name: 'type', in: 'query', schema: { type: 'string' }, description: 'repeatable' },
          { name: 'decision', in: 'query', schema: { enum: ['allow', 'deny'] } },
          { name: 'extensionId', in: 'query', schema: { type: 'string' } },
          { name: 'since', in: 'query', schema: { type: 'string', format: 'date-time' } },
          { name: 'until', in: 'query', schema: { type: 'string', format: 'date-time' } },
          {
            name: 'limit',
            in: 'query',
            schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
          },
          { name: 'order', in: 'query', schema: { enum: ['oldest', 'newest'] } },
          { name: 'after', in: 'query', schema: { type: 'integer' } },
        ],
        responses: {
          '200': json(
            ok({
              type: 'object',
              properties: {
                events: {
                  type: 'array',
                  items: {
                    type: 'object',
                    properties: { seq: { type: 'integer' }, event: { type: 'object' } },
                  },
                },
                next: { type: 'integer' },
              },
            }),
          ),
          ...failures(400, 401, 403),
        },
      },
    },
  },
} as const;
