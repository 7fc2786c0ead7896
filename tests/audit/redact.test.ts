import t from 'tap';
import { redactHost, redactHostLabels, redactPath } from '../../src/audit/redact.js';

const cases: Record<string, [string, string]> = {
  'query dropped': ['/repos/acme/app?access_token=abc&per_page=5', '/repos/acme/app'],
  'fragment dropped': ['/x#frag', '/x'],
  'root stays root': ['/', '/'],
  'GitHub token in a segment': ['/hooks/ghp_abcdefghijklmnopqrstuvwxyz0123/ping', '/hooks/{redacted}/ping'],
  'URL-encoded token still caught': ['/hooks/%67hp_abcdefghijklmnopqrstuvwxyz0123', '/hooks/{redacted}'],
  'JWT in a segment': ['/t/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig', '/t/{redacted}'],
  'high-entropy key': ['/keys/Zk3q9XbR2mLw8VtY1nHc4PsD6gJa0uEe', '/keys/{redacted}'],
  'ordinary words and numbers kept': [
    '/repos/acme/app/issues/12/comments',
    '/repos/acme/app/issues/12/comments',
  ],
  'UUIDs are identifiers, kept': [
    '/subscriptions/00000000-1111-2222-3333-444444444444/resourcegroups',
    '/subscriptions/00000000-1111-2222-3333-444444444444/resourcegroups',
  ],
  'malformed percent-encoding kept as is': ['/a/%zz', '/a/%zz'],
  'userinfo with a password': ['/id:hunter2hunter2@api.example.com:443', '/{redacted}@api.example.com:443'],
  'percent-encoded userinfo': ['/a/id%3Ahunter2hunter2%40host/b', '/a/{redacted}@host/b'],
  'an e-mail address is no userinfo, kept': ['/users/ann@example.com/keys', '/users/ann@example.com/keys'],
  'over-long path cut': [`/${'a'.repeat(3000)}`, `/${'a'.repeat(2047)}…`],
};

/** 40 random lower-case letters and digits: a token as a host name carries it (names are lower-cased). */
const RANDOM_LABEL = 'k7x2m9q4w8e1r5t3y6u0i2o9p4a7s1d3f8g5h2j6';

const hostCases: Record<string, [string, string]> = {
  'GitHub token as a label': [
    'ghp_0123456789abcdefghijklmnopqrstuvwxyzAB.example.com',
    '{redacted}.example.com',
  ],
  'GitHub token as a label, lower-cased': [
    'ghp_0123456789abcdefghijklmnopqrstuvwxyzab.example.com',
    '{redacted}.example.com',
  ],
  'random lower-case label': [`${RANDOM_LABEL}.example.com`, '{redacted}.example.com'],
  'random mixed-case label': ['Zk3q9XbR2mLw8VtY1nHc4PsD6gJa0uEe.example.com', '{redacted}.example.com'],
  'hex key as a label': ['a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0.example.com', '{redacted}.example.com'],
  'only the secret label goes': [`api.${RANDOM_LABEL}.example.com`, 'api.{redacted}.example.com'],
  'a JWT across labels leaves nothing of the name': [
    'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig.example.com',
    '{redacted}',
  ],
  'api.github.com kept': ['api.github.com', 'api.github.com'],
  'management.azure.com kept': ['management.azure.com', 'management.azure.com'],
  'long ordinary label kept': [
    'my-org-prod-eastus2.blob.core.windows.net',
    'my-org-prod-eastus2.blob.core.windows.net',
  ],
  'longer ordinary label kept': [
    'my-organisation-production-eastus2-01.example.com',
    'my-organisation-production-eastus2-01.example.com',
  ],
  'words and digits kept': [
    'storageaccountproduction2024backup.example.com',
    'storageaccountproduction2024backup.example.com',
  ],
  'UUID label kept (an identifier)': [
    '00000000-1111-2222-3333-444444444444.example.com',
    '00000000-1111-2222-3333-444444444444.example.com',
  ],
  'no host kept': ['-', '-'],
};

const textCases: Record<string, [string, string]> = {
  'a random label in a message': [
    `CONNECT target "${RANDOM_LABEL}.example.com" is refused`,
    'CONNECT target "{redacted}.example.com" is refused',
  ],
  'ordinary long words in a message kept': [
    'Host my-organisation-production-eastus2-01.example.com does not match',
    'Host my-organisation-production-eastus2-01.example.com does not match',
  ],
};

t.plan(3);

t.test('paths', async (t) => {
  t.plan(Object.keys(cases).length);
  for (const [name, [input, want]] of Object.entries(cases)) t.equal(redactPath(input), want, name);
});

t.test('hosts', async (t) => {
  t.plan(Object.keys(hostCases).length);
  for (const [name, [input, want]] of Object.entries(hostCases)) t.equal(redactHost(input), want, name);
});

t.test('host labels in text', async (t) => {
  t.plan(Object.keys(textCases).length);
  for (const [name, [input, want]] of Object.entries(textCases)) t.equal(redactHostLabels(input), want, name);
});
