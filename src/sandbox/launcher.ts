/**
 * The launcher that runs first inside the isolated profile's network namespace. It listens
 * on 127.0.0.1:<broker port> (the namespace's own loopback, so the session's proxy URL works
 * unchanged) and pipes each connection to the relay socket bind-mounted from outside; once
 * listening it starts the CLI and writes how it ended to the status file.
 *
 * Perl, not node: it is on the path of every isolated call, and node's start (~40 ms of CPU
 * here) was most of the profile's cost, while perl without modules starts in ~2 ms. perl-base
 * is part of every Debian system that has bubblewrap (it is Essential), and the probe checks
 * it runs (isolated.ts). No module is loaded (each costs milliseconds): the socket calls are
 * perl's own builtins, with Linux's constants written out (AF_UNIX 1, AF_INET 2, SOCK_STREAM 1,
 * IPPROTO_TCP 6, TCP_NODELAY 1, SHUT_WR 1).
 *
 * Descriptors: whatever clibroker inherited without close-on-exec reaches bwrap and the
 * launcher; the launcher closes every descriptor above 3 first (bwrap's init keeps none), so
 * no process in the sandbox holds one, and every descriptor it opens itself is close-on-exec.
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
 *
 * argv: <port> <relay socket> <status file> <entrypoint> [args…]
 * fd 3: the child's env as NAME=value entries, each ended by a NUL byte
 * status file: one line, `exit <code>`, `signal <number>`, `spawn-error <errno>` or
 * `launcher-error <errno>`
 */
export const LAUNCHER_SOURCE = String.raw`
$SIG{__WARN__} = sub {};
my ($port, $sock, $statusFile, $file, @args) = @ARGV;
sub report {
  my ($line, $code) = @_;
  if (open(my $fh, '>', $statusFile)) { print $fh $line; close $fh; }
  exit $code;
}
sub failed { report('launcher-error ' . ($! + 0), 125); }

# Descriptors clibroker itself was given without close-on-exec (a service manager's socket,
# a test runner's pipe) pass through bwrap to here; bwrap's init does not keep them, and
# none of them is for the CLI or the relay: closed before anything else runs.
opendir(my $fdDir, '/proc/self/fd') or failed();
my @inherited = grep { /^\d+$/ && $_ > 3 } readdir($fdDir);
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
