/**
 * The launcher that runs first inside the isolated profile's network namespace. It listens
 * on 127.0.0.1:<broker port> (the namespace's own loopback, so the session's proxy URL works
 * unchanged) and pipes each connection to the relay socket bind-mounted from outside; once
 * listening it spawns the CLI and writes how it ended to the status file.
 *
 * Kept as CommonJS source text and written into the call's run/ directory, because it must
 * run under plain `node` inside the namespace whether clibroker runs from src/ or dist/.
 * argv: <port> <relay socket> <status file> <entrypoint> [args…]; fd 3: the child's env as JSON
 */
export const LAUNCHER_SOURCE = `'use strict';
const net = require('node:net');
const fs = require('node:fs');
const { spawn } = require('node:child_process');
// fds 0-2 are the CLI's own stdio: it inherits them below, so they are the same open file
// descriptions. Node opens them as libuv streams the first time anything reads
// process.stdin, .stdout or .stderr (stream.pipe() and socket.destroy() both do), and libuv
// sets O_NONBLOCK on them; a CLI writing fast then fails with EAGAIN as soon as the pipe to
// clibroker is full. So the launcher never opens them: those three are inert here, before
// any other code runs, and the launcher reports through the status file instead.
const { Readable, Writable } = require('node:stream');
for (const name of ['stdout', 'stderr']) Object.defineProperty(process, name, { value: new Writable({ write: (_c, _e, cb) => cb() }) });
Object.defineProperty(process, 'stdin', { value: Readable.from([]) });
const [port, sock, statusFile, file, ...args] = process.argv.slice(2);
// The child's env comes on fd 3, not argv (it holds the session's proxy secret) and not our
// own env (bwrap --clearenv drops whatever a spawn wrapper of the host added, NODE_OPTIONS…).
const env = JSON.parse(fs.readFileSync(3, 'utf8'));
fs.closeSync(3);
const server = net.createServer((inner) => {
  // No Nagle: a TLS handshake's small writes would each wait for a delayed ACK (~40 ms).
  inner.setNoDelay(true);
  const outer = net.connect(sock);
  const end = () => { inner.destroy(); outer.destroy(); };
  inner.on('error', end); outer.on('error', end); inner.on('close', end); outer.on('close', end);
  inner.pipe(outer); outer.pipe(inner);
});
const report = (status, code) => {
  try { fs.writeFileSync(statusFile, JSON.stringify(status)); } catch {}
  process.exit(code);
};
server.on('error', (e) => report({ launcherError: String(e && e.code) }, 125));
server.listen(Number(port), '127.0.0.1', () => {
  const child = spawn(file, args, { stdio: 'inherit', env });
  child.on('error', (e) => report({ spawnError: String(e && e.code) }, 127));
  child.on('exit', (exitCode, signal) => report({ exitCode, signal }, exitCode === null ? 128 : exitCode));
});
`;
