import t from 'tap';
import { runCli, testCli } from './fixtures/helpers.js';

const cli = testCli();
const base = ['review', 'submit', '--pr', '1', '--event', 'COMMENT'];

t.test('two stdin consumers: flag-parse naming both, before anything is read', async (t) => {
  t.plan(5);
  const r = await runCli(cli, [...base, '--body-file', '-', '--comments-file', '-'], { stdin: '[]' });
  t.equal(r.code, 1);
  t.match(r.env, { success: false, error: { type: 'flag-parse', flag: 'body-file,comments-file' } });
  t.match(r.env?.success === false && r.env.error.hint, /write one payload to a file/);
  t.same(r.reads, [], 'neither stdin nor any file was read');
  t.equal(r.stderr.trim().split('\n').length, 1);
});

t.test('the rule holds even when a readable file comes first', async (t) => {
  const r = await runCli(cli, [...base, '--comments-file', '-', '--body-file', '-'], { files: { x: 'x' } });
  t.match(r.env, { error: { type: 'flag-parse', flag: 'comments-file,body-file' } });
  t.same(r.reads, []);
});

t.test('stdin that is a terminal is refused at once, never read', async (t) => {
  const r = await runCli(cli, [...base, '--body-file', '-'], { isTTY: true });
  t.equal(r.code, 1);
  t.match(r.env, { error: { type: 'flag-parse', flag: 'body-file' } });
  t.match(r.env?.success === false && r.env.error.message, /terminal/);
  t.same(r.reads, []);
});

t.test('one stdin consumer plus a file is fine', async (t) => {
  const r = await runCli(cli, [...base, '--body-file', '-', '--comments-file', 'c.json'], {
    stdin: 'from stdin',
    files: { 'c.json': '{"path":"a.ts","body":"x","line":1}' },
  });
  t.equal(r.code, 0, r.stdout);
  t.match(r.env, { success: true, data: { echo: { body: 'from stdin', comments: [{ path: 'a.ts' }] } } });
  t.same(r.reads, ['-', 'c.json']);
});

t.test('the direct flag stays accepted next to file alternatives', async (t) => {
  const r = await runCli(cli, [...base, '--body', 'inline']);
  t.match(r.env, { success: true, data: { echo: { body: 'inline' } } });
});

t.test('file problems name the file flag', async (t) => {
  const missing = await runCli(cli, [...base, '--body-file', 'nope.txt']);
  t.match(missing.env, { error: { type: 'flag-parse', flag: 'body-file', got: 'nope.txt' } });
  const badJson = await runCli(cli, [...base, '--comments-file', 'c.json'], { files: { 'c.json': '{oops' } });
  t.match(badJson.env, { error: { type: 'json-parse', flag: 'comments-file' } });
});
