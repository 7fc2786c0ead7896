/** The shipped JSON Schema is the generated one, and a secret field accepts only a reference object. */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { configJsonSchema } from '../../src/config/index.js';

// biome-ignore lint/suspicious/noExplicitAny: walking a JSON Schema
type S = any;

t.test('schemas/config.schema.json is generated from the zod schema', async (t) => {
  const committed = readFileSync(new URL('../../schemas/config.schema.json', import.meta.url), 'utf8');
  t.equal(
    committed,
    `${JSON.stringify(configJsonSchema(), null, 2)}\n`,
    'run `npm run docs:config-schema` after changing src/config/schema.ts',
  );
});

t.test('every secret field is {env} or {file}, a closed object, never a string', async (t) => {
  const s: S = configJsonSchema();
  const conns: S[] =
    s.properties.extensions.additionalProperties.properties.connection.oneOf ??
    s.properties.extensions.additionalProperties.properties.connection.anyOf;
  const byKind = Object.fromEntries(conns.map((c: S) => [c.properties.kind.const, c.properties]));
  const refs: [string, S][] = [
    ['oauth_access_token.accessToken', byKind.oauth_access_token.accessToken],
    ['api_key.apiKey', byKind.api_key.apiKey],
    ['bot_token.token', byKind.bot_token.token],
    ['basic.password', byKind.basic.password],
    ['oauth_client_credentials.clientSecret', byKind.oauth_client_credentials.clientSecret],
    ['daemon.executorToken', s.properties.daemon.properties.executorToken],
  ];
  t.plan(refs.length);
  for (const [name, ref] of refs) {
    t.same(
      ref.anyOf.map((o: S) => ({
        type: o.type,
        required: o.required,
        keys: Object.keys(o.properties),
        closed: o.additionalProperties === false,
      })),
      [
        { type: 'object', required: ['env'], keys: ['env'], closed: true },
        { type: 'object', required: ['file'], keys: ['file'], closed: true },
      ],
      name,
    );
  }
});

t.test('storeRetention is a closed object of whole days, 1 or more, beside store', async (t) => {
  const s: S = configJsonSchema();
  t.notOk(s.required.includes('storeRetention'), 'optional: absent keeps every event');
  t.match(s.properties.storeRetention, {
    type: 'object',
    required: ['days'],
    additionalProperties: false,
    properties: { days: { type: 'integer', minimum: 1 } },
  });
});
