/** Runs the real curl (Debian's /usr/bin/curl) through a broker session. */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface CurlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** curl with the session's proxy and CA in its environment only (nothing on argv). */
export function curl(
  session: { proxyUrl: string; caCertPem: string },
  args: readonly string[],
  opts: { stdin?: Buffer; timeoutMs?: number } = {},
): Promise<CurlResult> {
  const dir = mkdtempSync(join(tmpdir(), 'clibroker-curl-'));
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, session.caCertPem);
  return new Promise((resolve) => {
    const child = execFile(
      'curl',
      [
        '--silent',
        '--show-error',
        '--suppress-connect-headers',
        '--max-time',
        String(Math.ceil((opts.timeoutMs ?? 20_000) / 1000)),
        ...args,
      ],
      {
        env: { PATH: '/usr/bin:/bin', HOME: dir, HTTPS_PROXY: session.proxyUrl, CURL_CA_BUNDLE: caFile },
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    if (opts.stdin) child.stdin!.end(opts.stdin);
    else child.stdin!.end();
  });
}
