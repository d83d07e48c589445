"""memconform's OMP description and its reference agree, as a user of schemathesis would find out: plain
`st run fixtures/omp/openapi.yaml` against `memconform serve omp` finds nothing (errata O34)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.slow  # the slow tier: builds packages, starts browsers or whole suites in subprocesses

ROOT = Path(__file__).resolve().parents[1]
ST = Path(sys.executable).parent / "st"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """`memconform serve omp --port 0 --ai offline`: (base URL, global key) read from its banner. Its output
    goes to a file: the access log would fill a pipe nobody reads and stall the server."""
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "memconform.cli.main", "serve", "omp", "--port", "0", "--ai", "offline"],
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        found = None
        deadline = time.monotonic() + 30
        while found is None and time.monotonic() < deadline and proc.poll() is None:
            text = log.read_text("utf-8")
            url, key = re.search(r"(http://127\.0\.0\.1:\d+)/v1", text), re.search(r"global key:\s+(\S+)", text)
            found = (url.group(1), key.group(1)) if url and key else None
            time.sleep(0.05)
        assert found is not None, log.read_text("utf-8")
        yield found
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_405_names_every_method_of_the_path(served: tuple[str, str]) -> None:
    url, key = served
    auth = {"Authorization": f"Bearer {key}"}
    memories = httpx.request("OPTIONS", f"{url}/v1/memories", headers=auth, timeout=10)
    assert memories.status_code == 405 and set(memories.headers["allow"].replace(" ", "").split(",")) >= {"GET", "POST"}
    one = httpx.request("PATCH", f"{url}/v1/memories/mem_0000000000000000", headers=auth, timeout=10)
    assert one.status_code == 405 and {"GET", "PUT", "DELETE"} <= set(one.headers["allow"].replace(" ", "").split(","))
    search = httpx.put(f"{url}/v1/memories/search", headers=auth, json={"q": "x"}, timeout=10)
    assert search.status_code == 405 and search.headers["allow"] == "POST"  # not "no memory with id 'search'"
    assert search.json()["error"] == "method_not_allowed"


def test_empty_text_is_accepted_as_the_description_says(served: tuple[str, str]) -> None:
    """Errata O34: no minimum in the spec, none in the description, and the reference stores "" (the
    other reading, refusing it, is accepted too: the fuzzer records it instead of blaming it)."""
    url, key = served
    auth = {"Authorization": f"Bearer {key}"}
    body = {"content": "", "type": "episodic", "source": {"tool": "t", "timestamp": "2026-01-01T00:00:00Z"}}
    stored = httpx.post(f"{url}/v1/memories", headers=auth, json=body, timeout=10)
    assert stored.status_code == 201 and stored.json()["content"] == ""
    accepted = httpx.post(f"{url}/v1/memories/search", headers=auth, json={"q": "x", "limit": 7.0}, timeout=10)
    assert accepted.status_code == 200, accepted.text  # 7.0 is an integer, as JSON Schema reads it


@pytest.mark.skipif(not ST.exists(), reason="schemathesis's st command is not installed beside this Python")
def test_plain_schemathesis_finds_no_failure(served: tuple[str, str], tmp_path: Path) -> None:
    url, key = served
    proc = subprocess.run([str(ST), "run", str(ROOT / "fixtures" / "omp" / "openapi.yaml"), "--url", url,
                           "-H", f"Authorization: Bearer {key}", "--max-examples", "10", "--seed", "1", "--no-color"],
                          capture_output=True, text=True, timeout=540, check=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert "No issues found" in proc.stdout
