/**
 * The launchers that run first inside the isolated profile's network namespace: perl where
 * the host has it (the fast path), node otherwise. Each listens on 127.0.0.1:<broker port>
 * (the namespace's own loopback, so the session's proxy URL works unchanged) and pipes each
 * connection to the relay socket bind-mounted from outside; once listening it starts the CLI
 * and reports how it ended on fd 4. Both give the CLI the same things (docs/sandbox.md): the
 * env from fd 3 and nothing else, fds 0-2 as they came and no other descriptor, and the same
 * status line.
 *
 * argv: <port> <relay socket> <entrypoint> [args…]
 * fd 3: the child's env as NAME=value entries, each ended by a NUL byte (run.ts refuses a NUL
 *   inside one before anything starts)
 * fd 4: the status, one line: `exit <code>`, `signal <number>`, `spawn-error <errno>` or
 *   `launcher-error <errno>`. A pipe rather than a file in the call's directory: the CLI
 *   never holds it (close-on-exec), so nothing it runs can write or forge the status, and the
 *   run/ directory is bound read-only.
 */

/** Which interpreter runs the launcher: isolated.ts picks it once per process. */
export type LauncherKind = 'perl' | 'node';

/**
 * Perl: it is on the path of every isolated call, and node's start (~40 ms of CPU here) was
 * most of the profile's cost, while perl without modules starts in ~2 ms. perl-base is part of
 * every Debian system that has bubblewrap (it is Essential); Alpine and minimal Fedora/RHEL
 * images have none, and there the node launcher below runs instead. No module is loaded (each
 * costs milliseconds): the socket calls are perl's own builtins, with Linux's constants
 * written out (AF_UNIX 1, AF_INET 2, SOCK_STREAM 1, IPPROTO_TCP 6, TCP_NODELAY 1, SHUT_WR 1).
 *
 * Descriptors: whatever clibroker inherited without close-on-exec reaches bwrap and the
 * launcher; the launcher closes every descriptor above 4 first (bwrap's init keeps none), so
 * no process in the sandbox holds one, and every descriptor it opens itself is close-on-exec
 * (fd 4, the status pipe, is marked so).
 *
 * Processes: the launcher forks the CLI and waits for it; an acceptor it forks takes the
 * connections, one relay process per direction of each. When the CLI exits the launcher
 * writes the status and exits; bwrap's init then ends the PID namespace, and the kernel kills
 * the acceptor and any relay still running.
 *
 * stdio: fds 0-2 are the CLI's own (the same open file descriptions). The launcher never
 * reads, writes or changes them (no warning or error text: perl's are silenced), the acceptor
 * points its copies at /dev/null, and signal dispositions are left alone for the CLI (SIGPIPE
 * and SIGCHLD are ignored in the acceptor only: an ignored signal stays ignored across exec).
 */
export const PERL_LAUNCHER = String.raw`
$SIG{__WARN__} = sub {};
my ($port, $sock, $file, @args) = @ARGV;
# The status pipe, close-on-exec (F_SETFD 2, FD_CLOEXEC 1): the CLI never holds it.
my $statusOut;
fcntl($statusOut, 2, 1) if open($statusOut, '>&=', 4);
sub report {
  my ($line, $code) = @_;
  syswrite($statusOut, $line) if $statusOut;
  exit $code;
}
sub failed { report('launcher-error ' . ($! + 0), 125); }

# Descriptors clibroker itself was given without close-on-exec (a service manager's socket,
# a test runner's pipe) pass through bwrap to here; bwrap's init does not keep them, and
# none of them is for the CLI or the relay: closed before anything else runs.
opendir(my $fdDir, '/proc/self/fd') or failed();
my @inherited = grep { /^\d+$/ && $_ > 4 } readdir($fdDir);
closedir($fdDir);
for my $n (@inherited) {
  my $h;
  close($h) if open($h, '<&=', $n);
}

# The env comes on fd 3, not argv (it holds the session's proxy secret) and not our own env
# (bwrap --clearenv drops whatever a spawn wrapper of the host added).
open(my $envIn, '<&=', 3) or failed();
my $envText = do { local $/; <$envIn> };
close $envIn;
my %env;
for my $entry (split /\0/, $envText) {
  my $eq = index($entry, '=');
  $env{substr($entry, 0, $eq)} = substr($entry, $eq + 1) if $eq > 0;
}

socket(my $server, 2, 1, 0) or failed();
bind($server, pack('S n C4 x8', 2, $port, 127, 0, 0, 1)) or failed();
listen($server, 511) or failed();

# Every descriptor perl opens above fd 2 is close-on-exec: the CLI inherits only 0-2.
pipe(my $execErrIn, my $execErrOut) or failed();
my $cli = fork();
failed() unless defined $cli;
if ($cli == 0) {
  close $execErrIn;
  close $server;
  %ENV = %env;
  exec { $file } $file, @args;
  syswrite($execErrOut, $! + 0);
  exit 127;
}
close $execErrOut;
my $got = sysread($execErrIn, my $errno, 16);
close $execErrIn;
if ($got) {
  waitpid($cli, 0);
  report("spawn-error $errno", 127);
}

my $acceptor = fork();
if (defined $acceptor && $acceptor == 0) {
  close $statusOut if $statusOut;
  $SIG{CHLD} = 'IGNORE';
  $SIG{PIPE} = 'IGNORE';
  open(STDIN, '<', '/dev/null');
  open(STDOUT, '>', '/dev/null');
  open(STDERR, '>', '/dev/null');
  while (1) {
    my $inner;
    unless (accept($inner, $server)) {
      select(undef, undef, undef, 0.01);
      next;
    }
    my $relay = fork();
    if (defined $relay && $relay == 0) {
      close $server;
      bridge($inner);
      exit 0;
    }
    close $inner;
  }
}
# Without an acceptor a connect is refused at once rather than queued until the deadline.
close $server;

sub pump {
  my ($from, $to) = @_;
  my $buf;
  while (1) {
    my $n = sysread($from, $buf, 65536);
    last unless $n;
    my $off = 0;
    while ($off < $n) {
      my $w = syswrite($to, $buf, $n - $off, $off);
      return unless $w;
      $off += $w;
    }
  }
  shutdown($to, 1);
}

sub bridge {
  my ($inner) = @_;
  # No Nagle: a TLS handshake's small writes would each wait for a delayed ACK (~40 ms).
  setsockopt($inner, 6, 1, 1);
  socket(my $outer, 1, 1, 0) or return;
  connect($outer, pack('S a108', 1, $sock)) or return;
  my $up = fork();
  return unless defined $up;
  if ($up == 0) { pump($inner, $outer); exit 0; }
  pump($outer, $inner);
}

waitpid($cli, 0);
my $st = $?;
if ($st & 127) { report('signal ' . ($st & 127), 128); }
report('exit ' . ($st >> 8), $st >> 8);
`;

/**
 * Node, where perl does not run: the node that runs clibroker (its directory is bound
 * read-only for it when it lies outside the system directories). Kept as CommonJS source
 * text written into the call's run/ directory, so it runs the same whether clibroker runs
 * from src/ or dist/. One process: the listener, the relays and the CLI's spawn; when the CLI
 * exits it writes the status and exits, and the PID namespace ends with it.
 *
 * stdio: fds 0-2 are the CLI's own. Node opens them as libuv streams the first time anything
 * reads process.stdin, .stdout or .stderr (a warning printed, a stream piped), and libuv sets
 * O_NONBLOCK on them, which a CLI writing fast then gets as EAGAIN. So those three are inert
 * here before any other code runs, an uncaught error becomes a status line instead of a stack
 * on fd 2, and the CLI gets fds 0-2 by 'inherit' (libuv's child only clears O_NONBLOCK on
 * them and resets every signal to its default before the exec).
 *
 * Descriptors: node itself (before this file runs) opens its own close-on-exec and marks the
 * ones it inherited from 0 up to the first gap above 15 close-on-exec; one further up (fd 40,
 * fd 251 in some shells' children) is open without it and would reach the CLI through the
 * spawn. So every descriptor above 3 is closed first unless it is close-on-exec and of a kind
 * node opens for itself (an event or epoll descriptor, a pipe, /dev/null): a socket, a file or
 * a directory is closed whatever its flags.
 */
export const NODE_LAUNCHER = String.raw`'use strict';
const { Readable, Writable } = require('node:stream');
for (const name of ['stdout', 'stderr'])
  Object.defineProperty(process, name, { value: new Writable({ write: (_c, _e, cb) => cb() }) });
Object.defineProperty(process, 'stdin', { value: Readable.from([]) });
const fs = require('node:fs');
const net = require('node:net');
const { spawn } = require('node:child_process');
const { constants } = require('node:os');
const [port, sock, file, ...args] = process.argv.slice(2);
// The status pipe (a socket: it cannot be reopened), kept only while close-on-exec, which node
// set on it at start with the other inherited descriptors: the CLI never holds it. Without the
// flag it is closed, and bwrap's exit code (the launcher's, the CLI's own) stands alone.
let statusOut = -1;
try {
  const info = fs.readFileSync('/proc/self/fdinfo/4', 'latin1');
  if (parseInt(/^flags:\s*([0-7]+)$/m.exec(info)[1], 8) & 0o2000000) statusOut = 4;
  else fs.closeSync(4);
} catch {}
const report = (line, code) => {
  try { if (statusOut >= 0) fs.writeSync(statusOut, line); } catch {}
  process.exit(code);
};
const errno = (e) => (e && typeof e.errno === 'number' ? Math.abs(e.errno) : (e && constants.errno[e.code]) || 0);
const failed = (e) => report('launcher-error ' + errno(e), 125);
process.on('uncaughtException', failed);

const O_CLOEXEC = 0o2000000;
const NODES_OWN = /^(anon_inode:(\[(eventfd|eventpoll|io_uring|timerfd|signalfd)\]|inotify)|pipe:\[\d+\]|\/dev\/null)$/;
for (const name of fs.readdirSync('/proc/self/fd')) {
  const n = Number(name);
  if (!(n > 3) || n === statusOut) continue;
  let link;
  try {
    link = fs.readlinkSync('/proc/self/fd/' + n);
  } catch {
    continue; // the listing's own descriptor, closed again
  }
  let flags = 0;
  try {
    flags = parseInt(/^flags:\s*([0-7]+)$/m.exec(fs.readFileSync('/proc/self/fdinfo/' + n, 'latin1'))[1], 8);
  } catch {}
  if (!(flags & O_CLOEXEC) || !NODES_OWN.test(link)) fs.closeSync(n);
}

// The env comes on fd 3, not argv (it holds the session's proxy secret) and not our own env
// (bwrap --clearenv drops whatever a spawn wrapper of the host added, NODE_OPTIONS…).
const env = Object.create(null);
for (const entry of fs.readFileSync(3, 'utf8').split('\0')) {
  const eq = entry.indexOf('=');
  if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
}
fs.closeSync(3);

const server = net.createServer({ allowHalfOpen: true }, (inner) => {
  // No Nagle: a TLS handshake's small writes would each wait for a delayed ACK (~40 ms).
  inner.setNoDelay(true);
  const outer = net.connect({ path: sock, allowHalfOpen: true });
  const end = () => { inner.destroy(); outer.destroy(); };
  for (const s of [inner, outer]) { s.on('error', end); s.on('close', end); }
  inner.pipe(outer);
  outer.pipe(inner);
});
server.on('error', failed);
server.listen({ port: Number(port), host: '127.0.0.1', backlog: 511 }, () => {
  const child = spawn(file, args, { stdio: 'inherit', env });
  child.on('error', (e) => report('spawn-error ' + errno(e), 127));
  child.on('exit', (code, signal) =>
    signal ? report('signal ' + (constants.signals[signal] || 0), 128) : report('exit ' + code, code),
  );
});
`;

/** The launcher's source for `kind`. */
export function launcherSource(kind: LauncherKind): string {
  return kind === 'perl' ? PERL_LAUNCHER : NODE_LAUNCHER;
}
