/**
 * Conformance verdicts, on both backends: recorded with the store's clock, the latest one
 * for a sha256 is the one read back (a re-run supersedes a refusal), other programs'
 * verdicts never answer, and malformed verdicts are refused before anything is written.
 */
import t from 'tap';
import { BACKENDS, freshStore } from './fixtures/backends.js';
import { codeOf } from './fixtures/index.js';

const SHA = 'a'.repeat(64);
const OTHER = 'b'.repeat(64);
const base = { sha256: SHA, image: 'base', executable: '/usr/bin/curl', tool: 'atlassian:cli:curl' };

for (const backend of BACKENDS) {
  t.test(backend.name, { skip: backend.skip }, async (t) => {
    t.test('the latest verdict for a sha256 answers', async (t) => {
      const { store } = await freshStore(t, backend);
      t.equal(await store.conformanceFor(SHA), undefined, 'none recorded yet');
      const refused = await store.recordConformance({
        ...base,
        verdict: 'refused',
        code: 'CONFORMANCE_PROXY_IGNORED',
      });
      t.match(refused, {
        ...base,
        verdict: 'refused',
        code: 'CONFORMANCE_PROXY_IGNORED',
        seq: Number,
        time: /^\d{4}-\d\d-\d\dT/,
      });
      t.same(await store.conformanceFor(SHA), refused);
      const { tool: _, ...untooled } = base;
      const passed = await store.recordConformance({ ...untooled, verdict: 'pass' });
      t.ok(passed.seq > refused.seq, 'seq increases');
      t.ok(passed.time > refused.time, "the store's clock");
      t.same(await store.conformanceFor(SHA), passed, 'a re-run supersedes the refusal');
      t.notOk('code' in passed || 'tool' in passed, 'absent fields stay absent');
      t.equal(await store.conformanceFor(OTHER), undefined, "another program's verdict is not this one's");
    });

    t.test('malformed verdicts are refused, nothing written', async (t) => {
      const { store } = await freshStore(t, backend);
      const bad: Record<string, unknown> = {
        'a short sha256': { ...base, sha256: 'abc', verdict: 'pass' },
        'an upper-case sha256': { ...base, sha256: 'A'.repeat(64), verdict: 'pass' },
        'an unknown verdict': { ...base, verdict: 'fail', code: 'CONFORMANCE_PROXY_IGNORED' },
        'a refusal without its code': { ...base, verdict: 'refused' },
        'a pass with a code': { ...base, verdict: 'pass', code: 'CONFORMANCE_PROXY_IGNORED' },
        'no image': { ...base, image: '', verdict: 'pass' },
      };
      for (const [name, v] of Object.entries(bad))
        t.equal(await codeOf(store.recordConformance(v as never)), 'STORE_INPUT_INVALID', name);
      t.equal(
        await codeOf(store.conformanceFor('nope')),
        'STORE_INPUT_INVALID',
        'a lookup by a malformed sha256',
      );
      t.equal(await store.conformanceFor(SHA), undefined);
    });

    t.test('verdicts outlive the store: another open reads them', async (t) => {
      const { store, location } = await freshStore(t, backend);
      await store.recordConformance({ ...base, verdict: 'pass' });
      await store.close();
      const again = await backend.open(t, location);
      t.match(await again.conformanceFor(SHA), { verdict: 'pass', image: 'base' });
    });
  });
}
