/**
 * One reading of a host name: the manifest (egress), the configuration and the broker's
 * session all use src/policy/dns-name.ts, so a name one accepts the others accept. The
 * cases where the manifest's old rule and the session's old one disagreed are here, and
 * each is checked through both real entry points, not only the function.
 */
import t from 'tap';
import { createBroker } from '../../src/broker/broker.js';
import { defineExtension } from '../../src/manifest/define.js';
import { isDnsName } from '../../src/policy/dns-name.js';

const cases: Record<string, [host: string, ok: boolean]> = {
  'a plain name': ['api.github.com', true],
  'a last label starting with a digit (once refused by the session only)': ['api.example.1a', true],
  'digits in inner labels': ['1.2.3.example.com', true],
  'inner hyphens': ['my-host.example-1.com', true],
  'an IPv4 literal': ['10.0.0.1', false],
  'a numeric last label': ['api.example.123', false],
  'a hex last label, which URL parsing reads as an IPv4 part (once accepted by the manifest only)': [
    'api.example.0x1a',
    false,
  ],
  'a bare 0x last label (a number to URL parsing)': ['api.example.0x', false],
  'one label': ['localhost', false],
  'upper case': ['API.github.com', false],
  'a trailing dot': ['api.github.com.', false],
  'a wildcard': ['*.github.com', false],
  'a port': ['api.github.com:443', false],
  'an underscore': ['my_host.example.com', false],
  'a leading hyphen': ['-a.example.com', false],
  'a trailing hyphen': ['a-.example.com', false],
  'an empty label': ['a..example.com', false],
  'a label of 64 characters': [`${'a'.repeat(64)}.example.com`, false],
  'a label of 63 characters': [`${'a'.repeat(63)}.example.com`, true],
  'longer than 253 characters': [`${'a'.repeat(60)}.`.repeat(4) + 'example.com', false],
  'an IPv6 literal': ['[::1]', false],
};

t.test('isDnsName, and the manifest and the session agree with it', async (t) => {
  t.plan(Object.keys(cases).length);
  const broker = await createBroker();
  t.teardown(() => broker.close());
  for (const [name, [host, ok]] of Object.entries(cases)) {
    t.test(name, async (t) => {
      t.plan(3);
      t.equal(isDnsName(host), ok, `isDnsName(${JSON.stringify(host)})`);
      let manifest: unknown;
      try {
        defineExtension({ id: 'x', egress: [host], clis: [] });
      } catch (err) {
        manifest = err;
      }
      if (ok) t.equal(manifest, undefined, 'the manifest accepts it');
      else t.match(manifest, { code: 'MANIFEST_INVALID' }, 'the manifest refuses it');
      let session: unknown;
      try {
        broker.openSession({ egress: [host] }).close();
      } catch (err) {
        session = err;
      }
      if (ok) t.equal(session, undefined, 'a session accepts it');
      else
        t.match(
          session,
          { code: 'SESSION_OPTIONS_INVALID', details: { path: 'egress[0]' } },
          'a session refuses it with a code',
        );
    });
  }
});
