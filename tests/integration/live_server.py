"""memscope live run as a user runs it: started with its arguments, its URL
read from what it prints, then asked over HTTP as a browser or Prometheus
would. Shared by the integration, browser and Prometheus tests."""
import http.client
import json
import os
import re
import signal
import subprocess
import threading
import time

from proc_status import status_kib

SANITIZER_EXITS = (86, 87)


class Live:
    def __init__(self, memscope, args, env=None, cwd=None, token=None):
        self.proc = subprocess.Popen([memscope, "live"] + list(args), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
        self.lines = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        # The URL carries a token memscope made; one from --token-file is
        # never printed (the caller knows it).
        m = self.wait_for(r"(?:open|at) (http://([^/\s]+):(\d+)/)(?:\?token=(\w+))?", 60)
        self.host, self.port, self.token = m.group(2), int(m.group(3)), m.group(4) or token
        self.url = m.group(1) + (f"?token={self.token}" if self.token else "")

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line)

    def wait_for(self, pattern, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for line in list(self.lines):
                m = re.search(pattern, line)
                if m:
                    return m
            if self.proc.poll() is not None and not self._reader.is_alive():
                break
            time.sleep(0.05)
        raise AssertionError(f"memscope live never printed /{pattern}/: {''.join(self.lines)}")

    def request(self, method, path, body=None, headers=None, timeout=30):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        data = r.read()
        conn.close()
        return r.status, dict(r.getheaders()), data.decode()

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def auth(self):
        return {"Authorization": f"Bearer {self.token}"}

    def control(self, line, token=True):
        return self.request("POST", "/api/control", body=line, headers=self.auth() if token else {})

    def metrics(self, accept=None):
        status, headers, text = self.get("/metrics", headers={"Accept": accept} if accept else {})
        assert status == 200, text
        return text

    def session(self):
        for _ in range(600):
            status, _, text = self.get("/api/session")
            if status == 200:
                return json.loads(text)
            time.sleep(0.05)
        raise AssertionError("the session never became ready")

    def stream(self, until, last_id=None, timeout=60):
        """Batches from /api/stream (id, batch) until until(batches) is true."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        headers = {"Last-Event-ID": str(last_id)} if last_id is not None else {}
        conn.request("GET", "/api/stream", headers=headers)
        r = conn.getresponse()
        assert r.status == 200
        batches, event = [], {}
        deadline = time.time() + timeout
        while time.time() < deadline:
            line = r.fp.readline().decode()
            if not line:
                break
            line = line.rstrip("\n")
            if not line:
                if "data" in event:
                    batches.append((event.get("event", "message"), int(event.get("id", 0) or 0),
                                    json.loads(event["data"])))
                    if until(batches):
                        break
                event = {}
                continue
            key, _, value = line.partition(": ")
            event[key] = value
        conn.close()
        return batches

    def stop(self, sig=signal.SIGINT, timeout=60):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        self._reader.join(5)
        assert code not in SANITIZER_EXITS, "".join(self.lines)
        return code

    def rss_kb(self):
        return status_kib(self.proc.pid, "VmRSS")


def prom_samples(text):
    """{(name, frozenset(labels)): value} of a Prometheus text page."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$', line)
        assert m, f"not a sample line: {line!r}"
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        out[(m.group(1), labels)] = float(m.group(4))
    return out


def prom_value(samples, name, **labels):
    want = frozenset((k, str(v)) for k, v in labels.items())
    found = [v for (n, l), v in samples.items() if n == name and l == want]
    assert found, f"{name}{labels} not in /metrics: {sorted(n for n, _ in samples)}"
    return found[0]
