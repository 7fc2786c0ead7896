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
const [port, sock, statusFile, file, ...args] = process.argv.slice(2);
// The child's env comes on fd 3, not argv (it holds the session's proxy secret) and not our
// own env (bwrap --clearenv drops whatever a spawn wrapper of the host added, NODE_OPTIONS…).
const env = JSON.parse(fs.readFileSync(3, 'utf8'));
fs.closeSync(3);
const server = net.createServer((inner) => {
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
