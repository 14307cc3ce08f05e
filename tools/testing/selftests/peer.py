#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# The far side of a two-guest run (tools/testing/vm/pair): guest a serves
# the server halves of the cases guest b runs. One TCP connection from b,
# one line per request, every argument base64-encoded:
#
#   START ready server timeout   start SERVER (a bash command) in the
#                                background, then poll READY (a bash
#                                command, lib.sh's functions in scope)
#                                until it passes: "READY", or "DEAD rc"
#                                with the server's output when it exited
#                                first or TIMEOUT passed
#   WAIT [grace]                 the server's exit: "STATUS rc" and its
#                                output; given GRACE seconds, the server
#                                is stopped if it has not ended by then
#   KILL                         stop the server (its client failed)
#   RUN cmd                      run CMD to its end: "STATUS rc" and its
#                                output
#   QUIT                         the run is over
#
# "peer.py --rsh PORT" is instead a remote shell for one command, Open
# MPI's daemon: see rsh() and mpi_rsh.
#
# Output travels as "STATUS rc nbytes\n" then nbytes of it. In the
# commands @DEV@, @GID@ and @IP@ are this guest's device, its RoCE v2
# GID index and its address (from the environment: STAG_TEST_DEV,
# STAG_GID, STAG_IP).

import base64
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def subst(cmd):
    return (cmd.replace('@DEV@', os.environ.get('STAG_TEST_DEV', 'stag0'))
               .replace('@GID@', os.environ.get('STAG_GID', '1'))
               .replace('@IP@', os.environ.get('STAG_IP', '')))


def bash(cmd, **kw):
    script = '. %s/lib.sh; %s' % (HERE, subst(cmd))
    return subprocess.Popen(['bash', '-c', script], stdin=subprocess.DEVNULL, **kw)


def tcp_listening(port):
    """lib.sh's tcp_listening PORT, read from /proc/net without a process."""
    for name in ('/proc/net/tcp', '/proc/net/tcp6'):
        try:
            with open(name) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    # local_address is ADDR:PORT in hex; state 0A is LISTEN.
                    if fields[3] == '0A' and int(fields[1].rsplit(':', 1)[1], 16) == port:
                        return True
        except OSError:
            pass
    return False


def ready_check(ready):
    """READY as a function: tcp_listening PORT here, else a bash command.
    Each bash sources lib.sh: 0.3 s or more a poll in a guest of one vCPU
    under TCG, and most cases' servers are polled that way."""
    m = re.fullmatch(r'tcp_listening (\d+)', ready.strip())
    if m:
        return lambda: tcp_listening(int(m.group(1)))
    return lambda: bash(ready, stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL).wait() == 0


class Peer:
    def __init__(self, conn):
        self.rfile = conn.makefile('rb')
        self.conn = conn
        self.server = None
        self.out = None

    def reply(self, line, data=b''):
        self.conn.sendall(line.encode() + b'\n' + data)

    def status(self, rc, data):
        self.reply('STATUS %d %d' % (rc, len(data)), data)

    def output(self):
        self.out.seek(0)
        data = self.out.read()
        self.out.close()
        self.out = None
        return data

    def start(self, ready, cmd, timeout):
        self.out = tempfile.TemporaryFile()
        self.server = bash('timeout -k 5 %d %s' % (timeout, subst(cmd)),
                           stdout=self.out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        is_ready = ready_check(ready)
        while time.monotonic() < deadline:
            if self.server.poll() is not None:
                break
            if is_ready():
                self.reply('READY')
                return
            time.sleep(0.05)
        self.kill()
        rc = self.server.wait()
        self.server = None
        data = self.output()
        self.reply('DEAD %d %d' % (rc, len(data)), data)

    def wait(self, grace=None):
        if not self.server:
            self.status(255, b'no server was started\n')
            return
        try:
            rc = self.server.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.kill()
            rc = self.server.wait()
        self.server = None
        self.status(rc, self.output())

    def kill(self):
        if self.server and self.server.poll() is None:
            self.server.terminate()

    def run(self, cmd):
        p = bash(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        data, _ = p.communicate()
        self.status(p.returncode, data)

    def serve(self):
        for raw in self.rfile:
            words = raw.decode().split()
            if not words:
                continue
            args = [base64.b64decode(w).decode() for w in words[1:]]
            if words[0] == 'START':
                self.start(args[0], args[1], int(args[2]))
            elif words[0] == 'WAIT':
                self.wait(float(args[0]) if args else None)
            elif words[0] == 'KILL':
                self.kill()
                self.reply('OK')
            elif words[0] == 'RUN':
                self.run(args[0])
            elif words[0] == 'QUIT':
                self.reply('OK')
                return True
        return False


def rsh(port):
    """Run one command, sent by mpi_rsh: Open MPI's daemon, in this guest.

    A remote shell for mpirun, as ssh would be: one connection, one line
    (the command, base64), its output back on the connection, then the
    connection closes. Open MPI keeps the agent running as long as the
    daemon; their ends are tied through the connection."""
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(('', port))
    ls.listen(1)
    conn, _ = ls.accept()
    ls.close()
    with conn:
        cmd = base64.b64decode(conn.makefile('rb').readline()).decode()
        return bash(cmd, stdout=conn.fileno(), stderr=subprocess.STDOUT).wait()


def main():
    if len(sys.argv) > 2 and sys.argv[1] == '--rsh':
        return rsh(int(sys.argv[2]))
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 4790
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(('', port))
    ls.listen(1)
    # One client at a time, until it says the run is over.
    while True:
        conn, _ = ls.accept()
        with conn:
            if Peer(conn).serve():
                return 0


if __name__ == '__main__':
    sys.exit(main())
