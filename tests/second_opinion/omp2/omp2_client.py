"""A tiny test client for the omp2 server: start it as a subprocess, call it over loopback."""

import json
import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

SERVER = Path(__file__).with_name("server.py")


class RunningServer:
    def __init__(self, bugs: str = "", extra_env: dict | None = None):
        self.folder = tempfile.TemporaryDirectory()
        self.credentials = Path(self.folder.name) / "credentials.json"
        self.stderr_path = Path(self.folder.name) / "stderr.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_AI_")}
        env["SECOND_OPINION_BUGS"] = bugs
        env.update(extra_env or {})
        self.stderr = open(self.stderr_path, "wb")
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER), "--port", "0", "--credentials", str(self.credentials)],
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=env,
        )
        self.base = self.process.stdout.readline().decode().strip()
        if not self.base.startswith("http://127.0.0.1:"):
            self.stop()
            raise RuntimeError(f"server did not start: {self.stderr_path.read_text()}")
        self.keys = json.loads(self.credentials.read_text())

    def call(self, method: str, path: str, body=None, key: str | None = "global", raw: bytes | None = None):
        """(status, parsed JSON body or None, headers); key is 'global', 'other', a tool name, None or a literal."""
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        token = self.key(key)
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                status, payload, headers = response.status, response.read(), response.headers
        except urllib.error.HTTPError as error:
            status, payload, headers = error.code, error.read(), error.headers
        return status, (json.loads(payload) if payload else None), headers

    def key(self, name: str | None) -> str | None:
        if name is None:
            return None
        if name == "global":
            return self.keys["api_key"]
        if name == "other":
            return self.keys["other_user_key"]
        return self.keys["tool_keys"].get(name, name)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        self.stderr.close()

    def cleanup(self) -> None:
        self.folder.cleanup()


def memory(content: str, namespace: str, **fields) -> dict:
    body = {
        "content": content,
        "type": "semantic",
        "source": {"tool": "claude", "timestamp": "2026-06-29T12:00:00Z"},
    }
    body["namespace"] = namespace
    body.update(fields)
    return body
