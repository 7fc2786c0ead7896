/** The sandbox's guarantees, with real child processes, in the plain and the isolated profile. */
import { existsSync } from 'node:fs';
import t from 'tap';
import { runSandboxed } from '../../src/sandbox/index.js';
import { FAKE_SESSION, opts, profiles, sh } from './helpers.js';

const MiB = 1024 * 1024;

for (const image of await profiles()) {
  t.test(`${image}: argv reaches the program literally, never through a shell`, async (t) => {
    const hostile = [
      '$(id)',
      'a;touch /tmp/clibroker-pwned',
      '`id`',
      '|| true',
      '&',
      '$HOME',
      '\'"',
      '\\n',
      '*',
      '',
    ];
    // printf runs with no shell at all: each argument comes back on its own line, byte for byte.
    const r = await runSandboxed(opts('printf', ['%s\\n', ...hostile], { image }));
    t.equal(r.profile, image);
    t.equal(r.exitCode, 0, r.stderr);
    t.same(r.stdout.split('\n').slice(0, -1), hostile);
    t.notOk(existsSync('/tmp/clibroker-pwned'), 'the ; did not start a second command');
  });

  t.test(
    `${image}: the environment is built from nothing; HOME and TMPDIR are fresh and removed`,
    async (t) => {
      process.env.CLIBROKER_SANDBOX_LEAK = 'leaked-value';
      t.teardown(() => {
        delete process.env.CLIBROKER_SANDBOX_LEAK;
      });
      const r = await runSandboxed(
        sh(
          'env; echo "home=$HOME"; echo "tmp=$TMPDIR"; ls -A "$HOME" "$TMPDIR"; touch "$HOME/x" "$TMPDIR/y" && echo writable; cat "$SSL_CERT_FILE"',
          [],
          { image },
        ),
      );
      t.equal(r.exitCode, 0, r.stderr);
      t.notMatch(
        r.stdout,
        /CLIBROKER_SANDBOX_LEAK|leaked-value/,
        'a variable of this process is not inherited',
      );
      t.match(r.stdout, `HTTPS_PROXY=${FAKE_SESSION.proxyUrl}`, 'the proxy from the session');
      t.match(r.stdout, 'GH_PROMPT_DISABLED=1', 'the credentials env builder made it');
      t.match(r.stdout, FAKE_SESSION.caCertPem.trim(), 'the CA file holds the session CA');
      t.match(r.stdout, 'writable');
      const home = /^home=(.+)$/m.exec(r.stdout)?.[1];
      const tmp = /^tmp=(.+)$/m.exec(r.stdout)?.[1];
      t.ok(home && tmp && home !== tmp, 'separate HOME and TMPDIR');
      t.notSame(home, process.env.HOME);
      t.notOk(existsSync(home!), 'HOME removed');
      t.notOk(existsSync(tmp!), 'TMPDIR removed');
      const again = await runSandboxed(sh('echo "$HOME"; ls -A "$HOME" "$TMPDIR"', [], { image }));
      t.not(again.stdout.split('\n')[0], home, 'a fresh HOME per call');
      t.notMatch(again.stdout, /\bx\b|\by\b/, 'nothing left from the previous call');
    },
  );

  t.test(`${image}: the CLI's certificate directory holds the session CA and nothing else`, async (t) => {
    const r = await runSandboxed(
      sh('echo "dir=$SSL_CERT_DIR"; echo "file=$SSL_CERT_FILE"; ls -A "$SSL_CERT_DIR"', [], { image }),
    );
    t.equal(r.exitCode, 0, r.stderr);
    const dir = /^dir=(.+)$/m.exec(r.stdout)?.[1];
    const file = /^file=(.+)$/m.exec(r.stdout)?.[1];
    t.ok(dir && file, 'both set');
    t.equal(file, `${dir}/ca.pem`, 'the CA file is in it');
    t.same(r.stdout.split('\n').slice(2).filter(Boolean), ['ca.pem'], 'and nothing else is');
  });

  t.test(`${image}: stdin is passed through, and closed when not given`, async (t) => {
    const input = Buffer.from('line one\n$(id)\n\u00e9\n');
    const r = await runSandboxed(opts('cat', [], { image, stdin: input }));
    t.same(Buffer.from(r.stdout), input);
    // A cat with no stdin would hang on an open pipe or a TTY; it must see EOF at once.
    const closed = await runSandboxed(opts('cat', [], { image, deadlineMs: 5000 }));
    t.equal(closed.timedOut, false, 'cat got EOF');
    t.equal(closed.exitCode, 0);
    t.equal(closed.stdout, '');
    const tty = await runSandboxed(
      sh(
        'test -t 0 || test -t 1 || test -t 2 || echo no-tty; (: < /dev/tty) 2>/dev/null || echo no-ctty',
        [],
        { image },
      ),
    );
    t.equal(tty.stdout, 'no-tty\nno-ctty\n', 'no terminal at all');
  });

  t.test(
    `${image}: output over 2 MiB (stdout + stderr) is cut and flagged, and the child is drained`,
    async (t) => {
      const r = await runSandboxed(
        sh(
          'head -c 3145728 /dev/zero | tr "\\0" a; head -c 1048576 /dev/zero | tr "\\0" b >&2; echo done >&2; exit 7',
          [],
          { image },
        ),
      );
      t.equal(r.exitCode, 7, 'it ran to its end: the pipe never filled up');
      t.equal(r.timedOut, false);
      t.equal(r.truncated, true);
      t.equal(Buffer.byteLength(r.stdout) + Buffer.byteLength(r.stderr), 2 * MiB, 'exactly the cap kept');
      const under = await runSandboxed(
        sh('head -c 1048576 /dev/zero | tr "\\0" a; head -c 1048575 /dev/zero | tr "\\0" b >&2', [], {
          image,
        }),
      );
      t.equal(under.truncated, false, 'one byte under the cap is not cut');
      t.equal(under.stdout.length + under.stderr.length, 2 * MiB - 1);
    },
  );

  // The result is text: what it holds, in UTF-8, stays within the cap whatever bytes the CLI wrote.
  t.test(
    `${image}: binary or multi-byte output over the cap: the returned text is at most 2 MiB in UTF-8, cut on a character`,
    async (t) => {
      const bin = await runSandboxed(sh('head -c 3145728 /dev/zero | tr "\\0" "\\377"', [], { image }));
      t.equal(bin.truncated, true);
      t.ok(
        Buffer.byteLength(bin.stdout) <= 2 * MiB,
        `binary stdout is ${Buffer.byteLength(bin.stdout)} bytes as UTF-8`,
      );
      t.match(bin.stdout, /^\uFFFD+$/, 'each byte that is no UTF-8 reads as U+FFFD');
      const errBin = await runSandboxed(
        sh('head -c 3145728 /dev/zero | tr "\\0" "\\377" >&2', [], { image }),
      );
      t.ok(
        Buffer.byteLength(errBin.stderr) <= 2 * MiB,
        `binary stderr is ${Buffer.byteLength(errBin.stderr)} bytes as UTF-8`,
      );
      t.equal(errBin.truncated, true);
      // 3 MiB of '€' (3 bytes each): the cap falls 2 bytes into a character.
      const euro = await runSandboxed(sh("yes € | tr -d '\\n' | head -c 3145728", [], { image }));
      t.equal(euro.truncated, true);
      t.ok(
        Buffer.byteLength(euro.stdout) <= 2 * MiB,
        `stdout is ${Buffer.byteLength(euro.stdout)} bytes as UTF-8`,
      );
      t.equal(
        euro.stdout,
        '€'.repeat(Math.floor((2 * MiB) / 3)),
        'whole characters only, no U+FFFD for the cut one',
      );
      // Control bytes grow sixfold in JSON (a NUL is \u0000): the cap holds for the text as every
      // door writes it, a JSON string, over the cap and under it.
      for (const size of [3145728, 1048576]) {
        const nul = await runSandboxed(sh(`head -c ${size} /dev/zero`, [], { image }));
        t.equal(nul.truncated, true, `${size} NULs are over the cap once escaped`);
        t.ok(
          Buffer.byteLength(JSON.stringify(nul.stdout)) - 2 <= 2 * MiB,
          `${size} NULs: ${Buffer.byteLength(JSON.stringify(nul.stdout))} bytes in JSON`,
        );
        t.match(nul.stdout, /^\0+$/, 'what is kept is the output, in order');
      }
      const lines = await runSandboxed(sh('head -c 1048576 /dev/zero | tr "\\0" "\\n"', [], { image }));
      t.same(
        [lines.truncated, lines.stdout.length],
        [false, 1048576],
        'a MiB of newlines is 2 MiB in JSON: exactly the cap, nothing cut',
      );
      // Under the cap, a stray invalid byte is kept (as U+FFFD), not counted as a cut.
      const small = await runSandboxed(sh("printf 'a\\377b'", [], { image }));
      t.match(small, { stdout: 'a\uFFFDb', truncated: false });
    },
  );

  t.test(`${image}: a non-zero exit is data`, async (t) => {
    const r = await runSandboxed(sh('echo out; echo err >&2; exit 42', [], { image }));
    t.match(r, {
      exitCode: 42,
      signal: null,
      stdout: 'out\n',
      stderr: 'err\n',
      truncated: false,
      timedOut: false,
      profile: image,
    });
    const killed = await runSandboxed(sh('kill -TERM $$', [], { image }));
    t.match(killed, { exitCode: null, signal: 'SIGTERM' }, 'a signal is reported as a signal');
  });

  t.test(
    `${image}: the preamble runs first in the same sandbox and its output is never returned`,
    async (t) => {
      const r = await runSandboxed(
        sh('cat "$HOME/.login" "$TMPDIR/cache"; echo "$1"', ['command-ran'], {
          image,
          preamble: [
            '-c',
            'echo PREAMBLE-OUT; echo PREAMBLE-ERR >&2; echo logged-in > "$HOME/.login"; echo cached > "$TMPDIR/cache"',
          ],
        }),
      );
      t.equal(r.exitCode, 0, r.stderr);
      t.equal(r.stdout, 'logged-in\ncached\ncommand-ran\n', 'same HOME and TMPDIR as the preamble');
      t.notMatch(r.stdout + r.stderr, /PREAMBLE/, 'nothing of the preamble output');
      t.match(r.preamble, { exitCode: 0, signal: null });

      const failed = await runSandboxed(
        sh('echo should-not-run > /dev/stderr', [], {
          image,
          preamble: ['-c', 'echo PREAMBLE-SECRET-OUT; exit 3'],
        }),
      ).catch((e: unknown) => e);
      t.match(failed, { code: 'CLI_PREAMBLE_FAILED', details: { exitCode: 3 } });
      t.notMatch(
        JSON.stringify(failed) + String((failed as Error).message),
        /PREAMBLE-SECRET-OUT/,
        'the error carries no preamble output',
      );
    },
  );
}
