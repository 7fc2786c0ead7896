import { createHash } from 'node:crypto';
import t from 'tap';
import {
  type DecideInput,
  decide,
  type PolicyDecision,
  isTokenCredentialKind,
  requestDigest,
  resolveTier,
  TOKEN_CREDENTIAL_KINDS,
  type TierInput,
  toEngineDecision,
} from '../../src/policy/index.js';

const D = 'a'.repeat(64);
const base: Omit<DecideInput, 'class' | 'tier'> = {
  context: 'agent-step',
  digest: D,
  approvedDigests: [],
  writeAlreadySent: false,
  reviewable: true,
};

const cases: Record<
  string,
  [Partial<DecideInput> & Pick<DecideInput, 'class' | 'tier'>, Partial<PolicyDecision>]
> = {
  'read passes at tier read': [
    { class: 'read', tier: 'read' },
    { decision: 'allow', reason: 'read-allowed' },
  ],
  'read passes at tier write': [
    { class: 'read', tier: 'write', context: 'chat' },
    { decision: 'allow', reason: 'read-allowed' },
  ],
  'write is denied at tier read': [
    { class: 'write', tier: 'read' },
    {
      decision: 'deny',
      code: 'POLICY_BLOCKED',
      policyCode: 'CLI_REQUEST_TIER_DENIED',
      reason: 'tier-read-denies-write',
    },
  ],
  'destructive is denied at tier read, even approved': [
    { class: 'destructive', tier: 'read', approvedDigests: [D] },
    { decision: 'deny', policyCode: 'CLI_REQUEST_TIER_DENIED', reason: 'tier-read-denies-destructive' },
  ],
  'write passes at tier write in any context': [
    { class: 'write', tier: 'write', context: 'scheduled' },
    { decision: 'allow', reason: 'tier-write-allows-write' },
  ],
  'destructive in an agent step with a person needs approval': [
    { class: 'destructive', tier: 'write' },
    {
      decision: 'needs-approval',
      code: 'POLICY_BLOCKED',
      policyCode: 'CLI_APPROVAL_PENDING',
      digest: D,
      reason: 'destructive-needs-approval',
    },
  ],
  'destructive with its digest approved passes': [
    { class: 'destructive', tier: 'write', approvedDigests: ['b'.repeat(64), D] },
    { decision: 'allow', reason: 'destructive-approved' },
  ],
  'another approved digest does not count': [
    { class: 'destructive', tier: 'write', approvedDigests: ['b'.repeat(64)] },
    { decision: 'needs-approval' },
  ],
  'destructive in chat: confirmation required': [
    { class: 'destructive', tier: 'write', context: 'chat' },
    { decision: 'deny', policyCode: 'CLI_CONFIRMATION_REQUIRED', reason: 'no-person-in-chat' },
  ],
  'destructive via the API': [
    { class: 'destructive', tier: 'write', context: 'api' },
    { policyCode: 'CLI_CONFIRMATION_REQUIRED', reason: 'no-person-in-api' },
  ],
  'destructive in a tool block': [
    { class: 'destructive', tier: 'write', context: 'tool-block' },
    { policyCode: 'CLI_CONFIRMATION_REQUIRED', reason: 'no-person-in-tool-block' },
  ],
  'destructive when scheduled, even with an approved digest': [
    { class: 'destructive', tier: 'write', context: 'scheduled', approvedDigests: [D] },
    { policyCode: 'CLI_CONFIRMATION_REQUIRED', reason: 'no-person-in-scheduled' },
  ],
  'destructive in an agent step whose plan never asks': [
    { class: 'destructive', tier: 'write', context: 'agent-step-never-asks' },
    { policyCode: 'CLI_CONFIRMATION_NOT_APPROVABLE', reason: 'plan-never-asks' },
  ],
  'destructive with an unreviewable body': [
    { class: 'destructive', tier: 'write', reviewable: false },
    { policyCode: 'CLI_CONFIRMATION_UNREVIEWABLE', reason: 'body-unreviewable' },
  ],
  'destructive with no digest cannot be approved': [
    { class: 'destructive', tier: 'write', digest: undefined },
    { policyCode: 'CLI_CONFIRMATION_UNREVIEWABLE' },
  ],
  'destructive after a write in the same command': [
    { class: 'destructive', tier: 'write', writeAlreadySent: true },
    { policyCode: 'CLI_CONFIRMATION_AFTER_WRITE', reason: 'write-already-sent' },
  ],
  'approved destructive after a write in the re-run passes': [
    { class: 'destructive', tier: 'write', writeAlreadySent: true, approvedDigests: [D] },
    { decision: 'allow', reason: 'destructive-approved' },
  ],
};

t.test('decide', async (t) => {
  t.plan(Object.keys(cases).length);
  for (const [name, [input, want]] of Object.entries(cases)) {
    const d = decide({ ...base, ...input });
    t.match(d, want, name);
  }
});

t.test('toEngineDecision maps needs-approval to a refusal carrying the digest', async (t) => {
  const d = toEngineDecision(decide({ ...base, class: 'destructive', tier: 'write' }));
  t.same(d, {
    decision: 'deny',
    code: 'POLICY_BLOCKED',
    policyCode: 'CLI_APPROVAL_PENDING',
    reason: 'destructive-needs-approval',
    details: { digest: D },
  });
  t.same(toEngineDecision(decide({ ...base, class: 'read', tier: 'read' })), {
    decision: 'allow',
    reason: 'read-allowed',
  });
});

const T = (over: Partial<TierInput>): TierInput => ({
  requested: 'write',
  organizationCeiling: 'write',
  assignmentAllow: 'write',
  identity: 'assigned',
  credentialKind: 'oauth-client-credentials',
  ...over,
});

t.test('resolveTier', async (t) => {
  const tiers: Record<string, [TierInput, string, string]> = {
    'everything allows write': [T({}), 'write', 'requested'],
    'an OAuth access token can write': [T({ credentialKind: 'oauth-access-token' }), 'write', 'requested'],
    'a GitHub App can write (its token is minted for the tier)': [
      T({ credentialKind: 'github-app' }),
      'write',
      'requested',
    ],
    'no requested tier defaults to read': [T({ requested: undefined }), 'read', 'requested-default'],
    'requested read stays read': [T({ requested: 'read' }), 'read', 'requested'],
    'a linked identity is always read': [T({ identity: 'linked' }), 'read', 'linked-identity'],
    'an API key is read': [T({ credentialKind: 'api-key' }), 'read', 'token-credential'],
    'a bot token is read': [T({ credentialKind: 'bot-token' }), 'read', 'token-credential'],
    'basic credentials are read': [T({ credentialKind: 'basic' }), 'read', 'token-credential'],
    'the organization ceiling caps it': [T({ organizationCeiling: 'read' }), 'read', 'organization-ceiling'],
    'the assignment caps it': [T({ assignmentAllow: 'read' }), 'read', 'assignment-read'],
    'linked identity is named before the ceiling': [
      T({ identity: 'linked', organizationCeiling: 'read' }),
      'read',
      'linked-identity',
    ],
    'an unknown credential kind is read': [
      T({ credentialKind: 'mystery' as TierInput['credentialKind'] }),
      'read',
      'token-credential',
    ],
    'a kind the caller could not name is read': [
      T({ credentialKind: undefined }),
      'read',
      'token-credential',
    ],
  };
  t.plan(Object.keys(tiers).length);
  for (const [name, [input, tier, reason]] of Object.entries(tiers))
    t.same(resolveTier(input), { tier, reason }, name);
});

t.test('the token-credential rule: every kind but OAuth, an unknown one included', async (t) => {
  const kinds: Record<string, [string | undefined, boolean]> = {
    'OAuth client credentials write': ['oauth-client-credentials', false],
    'an OAuth access token writes': ['oauth-access-token', false],
    'a GitHub App writes': ['github-app', false],
    'an API key is a token': ['api-key', true],
    'a bot token is a token': ['bot-token', true],
    'basic is a token': ['basic', true],
    'an unknown kind is a token': ['mystery', true],
    'no kind is a token': [undefined, true],
  };
  t.plan(Object.keys(kinds).length + 1);
  for (const [name, [kind, token]] of Object.entries(kinds))
    t.equal(isTokenCredentialKind(kind), token, name);
  t.same(
    [...TOKEN_CREDENTIAL_KINDS],
    ['api-key', 'bot-token', 'basic'],
    'the listed token kinds follow the rule',
  );
});

t.test('requestDigest: stable, canonical, sensitive to every field', async (t) => {
  const d = requestDigest('DELETE', 'api.github.com', '/repos/acme/app', undefined);
  t.match(d, /^[0-9a-f]{64}$/);
  const documented = createHash('sha256')
    .update('clibroker-request-v1\u00006:DELETE,14:api.github.com,15:/repos/acme/app,0:,')
    .digest('hex');
  t.equal(d, documented, 'the encoding documented in docs/policy.md');
  t.equal(
    requestDigest('DELETE', 'API.github.com.', '/repos/acme/app', Buffer.alloc(0)),
    d,
    'host case, trailing dot, empty body',
  );
  t.equal(requestDigest('DELETE', 'api.github.com:443', '/repos/acme/app', ''), d, 'default port');
  const differ: Record<string, string> = {
    method: requestDigest('delete', 'api.github.com', '/repos/acme/app'),
    host: requestDigest('DELETE', 'uploads.github.com', '/repos/acme/app'),
    path: requestDigest('DELETE', 'api.github.com', '/repos/acme/app2'),
    query: requestDigest('DELETE', 'api.github.com', '/repos/acme/app?x=1'),
    body: requestDigest('DELETE', 'api.github.com', '/repos/acme/app', 'x'),
    'field boundaries': requestDigest('DELETE', 'api.github.com/repos', '/acme/app'),
  };
  for (const [name, x] of Object.entries(differ)) t.not(x, d, `${name} changes the digest`);
});
