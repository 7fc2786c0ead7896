// `clibroker serve --demo` where bubblewrap cannot run: the built binary started in a mount
// namespace of its own whose /usr/bin/bwrap is /dev/null (root only, as CI runs the tests).
// The demo falls back to plain images through the same serveHttp a configuration is served by:
// it says so in its banner, a Platform API call runs gh to completion, and SIGTERM stops it
// with exit 0 and its directory gone. An operator's `serve --config` with a plain image is
// still refused (tests/serve/binary.test.ts, the loader's CONFIG_IMAGE_PLAIN_UNDER_DAEMON).
import { existsSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import t from 'tap';
import { buildBinary } from '../cli/fixtures/helpers.js';
import { missing } from '../helpers/bwrap.js';
import { startProcess } from '../helpers/server-process.js';

t.setTimeout(300_000);
const PATH = process.env['PATH'] ?? '/usr/bin:/bin';
const skip =
  process.getuid?.() === 0 ? false : missing('the serve --demo fallback test', 'hiding bwrap needs root');

t.test(
  'serve --demo without bubblewrap: plain CLIs, said in the banner, served the same way',
  { skip },
  async (t) => {
    const { bin } = await buildBinary();
    t.teardown(() => rmSync(dirname(dirname(bin)), { recursive: true, force: true }));
    const demo = startProcess(
      t,
      'unshare',
      [
        '--mount',
        'sh',
        '-c',
        'mount --bind /dev/null /usr/bin/bwrap && exec "$0" "$@"',
        process.execPath,
        bin,
        'serve',
        '--demo',
        '--port',
        '0',
      ],
      { env: { PATH } },
    );
    const banner = await demo.until(/^Configuration and store: .*\n/m);
    const listening = JSON.parse(banner.split('\n')[0]!) as { url: string; tools: string[] };
    t.same(listening.tools, ['gh_cli', 'curl_cli'], 'both tools are offered');
    t.match(banner, /^WARNING: bubblewrap cannot run here \(.+\): the CLIs run with profile plain/m);
    const executor = /authorization: Bearer ([0-9a-f]{64})' -H 'content-type/.exec(banner)?.[1];
    const dir = /^Configuration and store: (\S+)/m.exec(banner)?.[1];
    if (executor === undefined || dir === undefined) throw new Error(`no token or directory in: ${banner}`);

    const call = await fetch(`${listening.url}/v1/tools/execute`, {
      method: 'POST',
      headers: { authorization: `Bearer ${executor}`, 'content-type': 'application/json' },
      body: JSON.stringify({ toolId: 'gh_cli', input: { args: ['api', 'user'] } }),
    });
    const body = (await call.json()) as { ok: boolean; result?: { exitCode: number; stdout: string } };
    t.match(body, { ok: true, result: { exitCode: 0, stdout: /"login":"octocat"/ } }, JSON.stringify(body));

    demo.child.kill('SIGTERM');
    t.equal(await demo.exited, 0, 'stops with exit 0');
    t.notOk(existsSync(dir), 'the demo directory is removed');
  },
);
