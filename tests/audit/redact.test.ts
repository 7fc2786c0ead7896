import t from 'tap';
import { redactPath } from '../../src/audit/redact.js';

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

t.plan(Object.keys(cases).length);
for (const [name, [input, want]] of Object.entries(cases)) t.equal(redactPath(input), want, name);
