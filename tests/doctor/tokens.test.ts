/**
 * The token-strength estimate behind CONFIG_SECRET_WEAK (src/config/token-strength.ts): what
 * docs/config.md promises passes, guessable tokens do not, and no reason holds the token.
 */
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { WEAK_BELOW_BITS, tokenBits, tokenWeakness } from '../../src/config/token-strength.js';

t.test('random tokens of 128 bits and more pass', async (t) => {
  for (let i = 0; i < 20; i++) {
    t.equal(tokenWeakness(randomBytes(32).toString('hex')), undefined, 'openssl rand -hex 32');
    t.equal(tokenWeakness(randomBytes(32).toString('base64')), undefined, 'base64 of 32 bytes');
    t.equal(
      tokenWeakness(`${randomBytes(16).toString('hex')}\n`),
      undefined,
      '16 bytes in hex, a line break',
    );
  }
  t.equal(tokenBits(randomBytes(32).toString('hex')), 256);
  t.equal(tokenBits('0123456789abcdeffedcba9876543210'), 128, '32 hex digits count 4 bits each');
  t.equal(tokenBits('0123456789abcdef'.repeat(2)), 64, 'a unit repeated twice counts once');
});

t.test('guessable tokens are weak, and the reason never holds them', async (t) => {
  for (const weak of [
    'changeme',
    'password123456789',
    'a'.repeat(200),
    '0123456789abcdef'.repeat(8),
    'correct horse battery staple',
    randomBytes(12).toString('hex'),
  ]) {
    const why = tokenWeakness(weak);
    t.ok(why, `weak: ${weak.slice(0, 12)}…`);
    t.notOk(why?.includes(weak.slice(0, 6)), 'no part of the token in the reason');
  }
  t.ok(tokenBits('0123456789abcdef'.repeat(8)) < WEAK_BELOW_BITS, 'a repeated unit counts once');
  t.match(tokenWeakness('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'), /fewer than 10 distinct/);
});
