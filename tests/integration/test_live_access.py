"""Who may make memscope live do what: the Host header names loopback
literally (a rebound name reads nothing), token files are decided on the
opened file (owner, mode, type: never a FIFO that hangs start-up, never a
link), a FIFO beneath the page cannot stall the server, a token from a file
is never printed, the read-only token reads and never controls, and the
page's `record FILE` creates only a plain name in the directory live was
started in."""
import os
import shutil
import socket
import subprocess
import time

import pytest

from conftest import run
from live_server import Live

TOKEN = "0123456789abcdef-token-0123"
READ_TOKEN = "read-only-token-fedcba9876543210"


def token_file(path, text=TOKEN, mode=0o600):
    path.write_text(text + "\n")
    path.chmod(mode)
    return path


def status_of(port, path, host, headers=""):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{headers}Connection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return int(data.split(b" ", 2)[1])


def test_the_host_header_must_name_loopback_literally(memscope):
    live = Live(memscope, ["--listen", "127.0.0.1:0", "-I", "200", "-e", "page-faults", "--", "sleep", "30"])
    try:
        live.session()
        p = live.port
        for host in (f"127.0.0.1:{p}", "127.0.0.1", f"127.1.2.3:{p}", f"localhost:{p}", "localhost", f"[::1]:{p}"):
            assert status_of(p, "/api/session", host) == 200, host
        # Names a site can point at 127.0.0.1 (DNS rebinding), and near misses.
        for host in ("127.evil.example", f"127.evil.example:{p}", "127.0.0.1.nip.io", f"127.0.0.1.nip.io:{p}",
                     "localhost.evil.example", "127.0.0.1:80:80", "127.0.0.1:http", "[::1].evil", "127.1",
                     "0x7f.0.0.1", "[::2]", "127.0.0.1 ", ""):
            for path in ("/metrics", "/api/session", "/api/stream"):
                assert status_of(p, path, host) == 403, (host, path)
    finally:
        live.stop()


def refused_quickly(memscope, args, timeout=20):
    start = time.monotonic()
    res = subprocess.run([memscope, "live", "--listen", "127.0.0.1:0", *args, "--", "true"], capture_output=True,
                         text=True, timeout=timeout)
    return res, time.monotonic() - start


def test_token_files_are_decided_on_the_opened_file(memscope, tmp_path):
    # A FIFO: opened without waiting for a writer, then refused.
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    res, took = refused_quickly(memscope, ["--token-file", str(fifo)])
    assert res.returncode == 2 and f"--token-file {fifo}: not a regular file" in res.stderr, res.stderr
    assert took < 15
    # A link to a good token file is not followed.
    good = token_file(tmp_path / "good")
    (tmp_path / "link").symlink_to(good)
    res, _ = refused_quickly(memscope, ["--token-file", str(tmp_path / "link")])
    assert res.returncode == 2 and "a symbolic link" in res.stderr, res.stderr
    # Readable or writable by others.
    for mode in (0o640, 0o620, 0o606):
        token_file(good, mode=mode)
        res, _ = refused_quickly(memscope, ["--token-file", str(good)])
        assert res.returncode == 2 and "chmod 600" in res.stderr, (mode, res.stderr)
    # The same checks for the read-only token.
    res, _ = refused_quickly(memscope, ["--read-token-file", str(fifo)])
    assert res.returncode == 2 and f"--read-token-file {fifo}: not a regular file" in res.stderr, res.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the file to another user")
def test_a_token_file_another_user_owns_is_refused(memscope, tmp_path):
    theirs = token_file(tmp_path / "theirs")
    os.chown(theirs, 65534, 65534)
    res, _ = refused_quickly(memscope, ["--token-file", str(theirs)])
    assert res.returncode == 2, res.stderr
    assert f"--token-file {theirs}: owned by uid 65534, not by the user running memscope (uid 0) or root" \
        in res.stderr
    # As nobody: a root-owned 0600 file is the administrator's, and nobody
    # cannot read it anyway; a file of nobody's own is taken.
    tmp_path.chmod(0o755)
    os.chown(theirs, 65534, 65534)
    res = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", memscope, "live",
                          "--listen", "127.0.0.1:0", "--no-ui", "--token-file", str(theirs), "--exit-at-end",
                          "-e", "page-faults", "--", "true"], capture_output=True, text=True, timeout=60)
    assert "owned by uid" not in res.stderr and TOKEN not in res.stderr, res.stderr


def test_a_fifo_beneath_the_page_stalls_nothing(memscope, build_dir, tmp_path):
    web = tmp_path / "web"
    shutil.copytree(build_dir / "contrib" / "web", web)
    os.mkfifo(web / "stall.js", 0o644)
    live = Live(memscope, ["--listen", "127.0.0.1:0", "-I", "200", "-e", "page-faults", "--", "sleep", "30"],
                env=dict(os.environ, MEMSCOPE_WEB_DIR=str(web)))
    try:
        live.session()
        start = time.monotonic()
        assert status_of(live.port, "/stall.js", "127.0.0.1") == 404
        assert time.monotonic() - start < 10
        assert status_of(live.port, "/metrics", "127.0.0.1") == 200
    finally:
        live.stop()


def test_a_token_from_a_file_is_never_printed(memscope, tmp_path):
    secret = token_file(tmp_path / "token")
    live = Live(memscope, ["--no-ui", "--listen", "0.0.0.0:0", "--remote", "--token-file", str(secret),
                           "-I", "100", "-e", "page-faults", "--", "sleep", "30"], token=TOKEN)
    try:
        live.wait_for("serving")
        status, _, _ = live.get("/metrics", headers=live.auth())
        assert status == 200
        status, _, _ = live.get("/metrics")
        assert status == 403, "every request needs the token off loopback"
    finally:
        live.stop()
    said = "".join(live.lines)
    assert TOKEN not in said, said
    assert f"the token is the one in {secret}" in said
    assert "on every address of this machine" in said
    assert "open http" not in said, "--no-ui: there is no page to open"


def test_the_read_only_token_reads_and_never_controls(memscope, tmp_path):
    full, read = token_file(tmp_path / "token"), token_file(tmp_path / "read", READ_TOKEN)
    live = Live(memscope, ["--listen", "0.0.0.0:0", "--remote", "--token-file", str(full), "--read-token-file",
                           str(read), "-I", "100", "-e", "page-faults", "--", "sleep", "30"], token=TOKEN)
    try:
        live.wait_for("reads .* but never controls")
        reader = {"Authorization": f"Bearer {READ_TOKEN}"}
        deadline = time.time() + 60
        while live.get("/api/session", headers=reader)[0] == 503 and time.time() < deadline:
            time.sleep(0.05)
        for path in ("/metrics", "/api/session", "/"):
            status, _, _ = live.get(path, headers=reader)
            assert status == 200, path
        status, _, text = live.request("POST", "/api/control", body="pause", headers=reader)
        assert status == 403 and "read-only token" in text, text
        # The page opened with the read token gets it as its cookie, never the control token.
        status, headers, _ = live.get(f"/?token={READ_TOKEN}")
        assert status == 200 and headers["Set-Cookie"].startswith(f"memscope_token={READ_TOKEN};")
        status, _, text = live.get("/api/session", headers=reader)
        assert '"token":false' in text, "the page shows no controls to a reader"
        status, _, text = live.control("pause")
        assert status == 200 and "paused" in text, text
    finally:
        live.stop()
    assert READ_TOKEN not in "".join(live.lines) and TOKEN not in "".join(live.lines)
    same = token_file(tmp_path / "same")
    res, _ = refused_quickly(memscope, ["--token-file", str(full), "--read-token-file", str(same)])
    assert res.returncode == 2 and "must differ" in res.stderr, res.stderr


def test_record_from_the_page_creates_only_a_plain_name_where_live_started(memscope, tmp_path):
    start, elsewhere = tmp_path / "start", tmp_path / "elsewhere"
    start.mkdir()
    elsewhere.mkdir()
    live = Live(memscope, ["--listen", "127.0.0.1:0", "-I", "100", "-e", "page-faults", "--", "sleep", "30"],
                cwd=start)
    try:
        live.session()
        for name in (str(elsewhere / "x.rec"), "../elsewhere/x.rec", "sub/x.rec", "/etc/cron.d/x", "..", ".",
                     ".hidden.rec"):
            status, _, text = live.control(f"record {name}")
            assert status == 409 and "plain file name" in text, (name, text)
        for line in ("record  ", "record \t", "record  x.rec", "record x.rec "):
            status, _, text = live.control(line)
            assert status == 409 and text.startswith("error: "), (line, text)
        assert sorted(os.listdir(start)) == [] and sorted(os.listdir(elsewhere)) == []
        status, _, text = live.control("record page.rec")
        assert status == 200 and text == "ok: recording to page.rec", text
        time.sleep(0.5)
        status, _, text = live.control("record stop")
        assert status == 200 and text.startswith("ok: page.rec closed with "), text
    finally:
        live.stop()
    assert sorted(os.listdir(start)) == ["page.rec"] and not os.listdir(elsewhere)
    assert (start / "page.rec").read_text().startswith('{"format":"memscope-recording"')


HOLD = """
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
held = []
for _ in range(n):
    try:
        held.append(socket.create_connection(("127.0.0.1", port), timeout=5))
    except OSError:
        pass
time.sleep(1.5)
open_now = 0
for s in held:
    s.setblocking(False)
    try:
        open_now += s.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        open_now += 1
    except OSError:
        pass
print(open_now, flush=True)
sys.stdin.read()
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to be two users")
def test_another_user_with_idle_connections_locks_nobody_out(memscope):
    """nobody opens every connection memscope live takes and sends nothing: it
    keeps at most an eighth of them, and the owner is still answered at once."""
    live = Live(memscope, ["--listen", "127.0.0.1:0", "--max-connections", "80", "-I", "200", "-e", "page-faults",
                           "--", "sleep", "60"])
    holder = None
    try:
        live.session()
        holder = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "python3", "-c",
                                   HOLD, str(live.port), "80"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True)
        held = int(holder.stdout.readline())
        assert held <= 80 // 8, f"nobody holds {held} of 80 connections"
        start = time.monotonic()
        status, _, _ = live.get("/api/session", timeout=10)
        assert status == 200 and time.monotonic() - start < 5
        status, _, _ = live.get("/metrics", headers=live.auth(), timeout=10)
        assert status == 200
    finally:
        if holder:
            holder.stdin.close()
            holder.wait(timeout=30)
        live.stop()


def test_memscope_ctl_records_into_the_directory_live_started_in(memscope, tmp_path):
    """memscope ctl (the owner's control socket) names the file from its own
    directory: it is taken when that is the directory live started in (the
    same directory, not the same name), refused from anywhere else."""
    start, elsewhere = tmp_path / "start", tmp_path / "elsewhere"
    start.mkdir()
    elsewhere.mkdir()
    live = Live(memscope, ["--listen", "127.0.0.1:0", "-I", "100", "-e", "page-faults", "--", "sleep", "30"],
                cwd=start)
    try:
        live.session()
        pid = ["--pid", str(live.proc.pid)]
        res = run([memscope, "ctl", *pid, "record", "there.rec"], cwd=elsewhere)
        assert res.returncode == 1 and "plain file name" in res.stderr, res
        res = run([memscope, "ctl", *pid, "record", "here.rec"], cwd=start)
        assert res.returncode == 0 and res.stdout.startswith("ok: recording to here.rec"), res
        # The page (whoever holds the token) names no path at all, not even one there.
        status, _, text = live.control(f"record {start / 'page.rec'}")
        assert status == 409 and "plain file name" in text, text
    finally:
        live.stop()
    assert sorted(os.listdir(start)) == ["here.rec"] and not os.listdir(elsewhere)
