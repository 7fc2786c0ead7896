import t from 'tap';
import { type Connection, credentialKind, isTokenCredential } from '../../src/credentials/types.js';

t.test("a connection's kind names the tier rule's kind, and the token rule is the policy's", async (t) => {
  const cases: Record<string, [Connection, string, boolean]> = {
    'an OAuth access token': [{ kind: 'oauth_access_token', accessToken: 'x' }, 'oauth-access-token', false],
    'OAuth client credentials': [
      { kind: 'oauth_client_credentials', clientId: 'c', clientSecret: 's', tokenUrl: 'https://t.example/' },
      'oauth-client-credentials',
      false,
    ],
    'an API key': [{ kind: 'api_key', apiKey: 'x' }, 'api-key', true],
    'a bot token': [{ kind: 'bot_token', token: 'x' }, 'bot-token', true],
    basic: [{ kind: 'basic', username: 'u', password: 'p' }, 'basic', true],
    'a GitHub App': [
      { kind: 'github_app', appId: '1', installationId: '2', privateKey: 'k' },
      'github-app',
      false,
    ],
  };
  t.plan(Object.keys(cases).length * 2 + 3);
  for (const [name, [c, kind, token]] of Object.entries(cases)) {
    t.equal(credentialKind(c.kind), kind, `${name}: ${kind}`);
    t.equal(isTokenCredential(c), token, `${name}: ${token ? 'a token credential' : 'may write'}`);
  }
  t.equal(credentialKind('mystery'), undefined, 'an unknown kind has no name');
  t.equal(credentialKind('toString'), undefined, 'nor does a name from the prototype');
  t.equal(
    isTokenCredential({ kind: 'mystery' } as unknown as Connection),
    true,
    'an unknown kind is a token',
  );
});
