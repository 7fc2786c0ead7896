import t from 'tap';
import { REVIEW_TARGET_LIMIT, reviewTarget } from '../../src/audit/review-target.js';

const GH = 'ghp_abcdefghijklmnopqrstuvwxyz0123';

// [target as sent, what the reviewer is shown] — or the reason it cannot be shown.
const shown: Record<string, [string, string]> = {
  'path only': ['/repos/acme/app', '/repos/acme/app'],
  'the query is shown': [
    '/repos/acme/app/issues/comments/7?purge=all',
    '/repos/acme/app/issues/comments/7?purge=all',
  ],
  'every field, in order, as sent': ['/a?b=1&c=&d&b=2', '/a?b=1&c=&d&b=2'],
  'an empty query stays': ['/a?', '/a?'],
  'a secret-shaped value redacted, its name kept': [
    `/a?access_token=${GH}&purge=all`,
    '/a?access_token={redacted}&purge=all',
  ],
  'a percent-encoded secret is caught': ['/a?t=%67hp_abcdefghijklmnopqrstuvwxyz0123', '/a?t={redacted}'],
  'credentials in a URL value redacted': ['/a?next=https://u:hunter2hunter2@h/x', '/a?next={redacted}'],
  'a secret-shaped path segment redacted': [`/hooks/${GH}?x=1`, '/hooks/{redacted}?x=1'],
  'percent-escapes shown as sent': ['/a/%E2%80%AE?q=%20', '/a/%E2%80%AE?q=%20'],
  'UUIDs are identifiers, kept': [
    '/s/00000000-1111-2222-3333-444444444444?id=00000000-1111-2222-3333-444444444444',
    '/s/00000000-1111-2222-3333-444444444444?id=00000000-1111-2222-3333-444444444444',
  ],
  'at the limit': [`/${'a'.repeat(REVIEW_TARGET_LIMIT - 1)}`, `/${'a'.repeat(REVIEW_TARGET_LIMIT - 1)}`],
};

const refused: Record<string, [string, string]> = {
  'one character over the limit': [`/${'a'.repeat(REVIEW_TARGET_LIMIT)}`, 'target-too-long'],
  'a long query': [`/a?q=${'x'.repeat(REVIEW_TARGET_LIMIT)}`, 'target-too-long'],
  'a fragment': ['/a?b=1#c', 'target-not-origin-form'],
  'a fragment in the path': ['/a#c', 'target-not-origin-form'],
  'absolute form': ['https://api.github.com/a', 'target-not-origin-form'],
  'a secret-shaped name': [`/a?${GH}=1`, 'query-name-secret'],
  'a secret-shaped bare field': [`/a?x=1&${GH}`, 'query-name-secret'],
};

for (const [name, [target, want]] of Object.entries(shown))
  t.same(reviewTarget(target), { ok: true, shown: want }, name);
for (const [name, [target, why]] of Object.entries(refused))
  t.same(reviewTarget(target), { ok: false, why }, name);
