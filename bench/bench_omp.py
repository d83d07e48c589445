"""Benchmarks for OMP. Figures go into closing notes; unit tests never time things.

    python bench/bench_omp.py [--requests 2000] [--threads 4] [--samples 500] [--repeat 3]

1. Requests per second the harness's HttpTarget sustains against the reference server
   (a create/get/list mix, a bounded number of requests, 1 and N client threads).
2. The harness's own overhead per request: the same requests through HttpTarget and through a bare
   httpx.Client, and the floor of the HTTP stack (bare httpx against a trivial ASGI app).
3. The stall note (harness/targets/nodelay.py) on the reference and on the nagle_stall mutant: small
   requests against a control of large answers from the same server, measured side by side.
4. The OMP suite against the reference under the `ci` profile: the OMP-Core checks alone and the
   whole suite (in process), and the whole `memconform run --suite omp --profile ci` command.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from memconform.core.profile import Limits, Profile
from memconform.kit.loopback import serve_in_thread
from memconform.suites.omp.reference.serve import ServedTarget, reference_target
from memconform.targets.base import Reply, Request
from memconform.targets.base import Route as HttpRoute
from memconform.targets.http import HttpTarget
from memconform.targets.nodelay import judge_stall
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

ROOT = Path(__file__).resolve().parents[1]
STAMP = "2026-06-29T12:00:00Z"


def memory(i: int) -> dict[str, Any]:
    return {"content": f"bench memory {i}: the user prefers option {i % 97}", "type": "semantic",
            "source": {"tool": "bench", "timestamp": STAMP}, "tags": ["bench", f"t{i % 10}"], "namespace": "bench"}


def mix(send: Callable[..., Any], n: int, offset: int = 0) -> None:
    """n requests: a create, a get of it and a list of 20, in turn."""
    last_id = None
    for i in range(n):
        step = i % 3
        if step == 0 or last_id is None:
            r = send("POST", "/v1/memories", memory(offset + i))
            last_id = r.json()["id"]
        elif step == 1:
            send("GET", f"/v1/memories/{last_id}", None)
        else:
            send("GET", "/v1/memories", None, {"namespace": "bench", "limit": "20"})


def via_target(target: HttpTarget) -> Callable[..., Any]:
    def send(method: str, path: str, body: Any = None, params: dict[str, str] | None = None) -> Reply:
        r = target.call(Request(f"{method} {path}", body=body, params=params, route=HttpRoute(method, path, statuses="returned")))
        assert r.ok, r.text
        return r
    return send


def via_httpx(client: httpx.Client) -> Callable[..., Any]:
    def send(method: str, path: str, body: Any = None, params: dict[str, str] | None = None) -> httpx.Response:
        r = client.request(method, path, json=body, params=params)
        assert r.status_code < 300, r.text
        return r
    return send


def rps(ref: ServedTarget, requests: int, threads: int) -> float:
    per_thread = requests // threads
    targets = [HttpTarget(ref.base_url, {}, Limits(), ref.api_key) for _ in range(threads)]
    workers = [threading.Thread(target=mix, args=(via_target(t), per_thread, k * per_thread)) for k, t in enumerate(targets)]
    started = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    elapsed = time.perf_counter() - started
    for t in targets:
        t.close()
    return per_thread * threads / elapsed


def per_request(sends: dict[str, Callable[..., Any]], n: int, path: str = "/v1/health") -> dict[str, float]:
    """Median seconds of n small GETs per client, the clients taking turns so that load on the
    machine falls on all of them alike (after a warm-up)."""
    samples: dict[str, list[float]] = {name: [] for name in sends}
    for _ in range(20):
        for send in sends.values():
            send("GET", path, None)
    for _ in range(n):
        for name, send in sends.items():
            t = time.perf_counter()
            send("GET", path, None)
            samples[name].append(time.perf_counter() - t)
    return {name: statistics.median(s) for name, s in samples.items()}


def trivial_app() -> Starlette:
    async def health(request: Any) -> JSONResponse:
        return JSONResponse({"status": "ok", "version": "0.1", "memories_count": 0, "compliance": "OMP-Full"})
    return Starlette(routes=[Route("/v1/health", health)])


def stall_samples(target: HttpTarget, n: int = 20) -> tuple[list[float], list[float]]:
    """(small requests, control): GET /v1/health and a page of 100 memories (over 4 KiB), taking turns."""
    send = via_target(target)
    for i in range(30):
        send("POST", "/v1/memories", memory(i))
    small: list[float] = []
    control: list[float] = []
    for _ in range(n):
        for samples, path, params in ((small, "/v1/health", None), (control, "/v1/memories", {"limit": "100"})):
            t = time.perf_counter()
            send("GET", path, None, params)
            samples.append(time.perf_counter() - t)
    return small, control


def stall_line(samples: tuple[list[float], list[float]]) -> str:
    small, control = samples
    note = judge_stall(small, control)
    return (f"small median {statistics.median(small) * 1e3:.1f} ms, control median {statistics.median(control) * 1e3:.1f} ms: "
            f"{note.text() if note else 'no note'}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=2000, help="requests per throughput run (bounded)")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--samples", type=int, default=500, help="requests per client per overhead measurement")
    ap.add_argument("--repeat", type=int, default=3, help="throughput runs per thread count")
    args = ap.parse_args()

    ref = reference_target()
    try:
        for threads in (1, args.threads):
            runs = sorted(rps(ref, args.requests, threads) for _ in range(args.repeat))
            print(f"HttpTarget vs reference, create/get/list mix, {args.requests} requests, {threads} thread(s): "
                  f"best {runs[-1]:.0f} requests/s, median {statistics.median(runs):.0f} (of {args.repeat} runs)")
        floor_url, stop = serve_in_thread(trivial_app())
        try:
            with httpx.Client(base_url=ref.base_url, headers={"Authorization": f"Bearer {ref.api_key}"}) as raw, \
                    httpx.Client(base_url=floor_url) as floor:
                health = per_request({"floor": via_httpx(floor), "raw": via_httpx(raw), "target": via_target(ref)},
                                     args.samples)
                listing = per_request({"raw": via_httpx(raw), "target": via_target(ref)}, args.samples, "/v1/memories")
        finally:
            stop()
        print(f"median per request, GET /v1/health: bare httpx on a trivial ASGI app {health['floor'] * 1e3:.3f} ms; "
              f"bare httpx on the reference {health['raw'] * 1e3:.3f} ms; HttpTarget on the reference {health['target'] * 1e3:.3f} ms")
        print(f"median per request, GET /v1/memories (20 per page): bare httpx {listing['raw'] * 1e3:.3f} ms; "
              f"HttpTarget {listing['target'] * 1e3:.3f} ms")
        print(f"harness overhead per request (HttpTarget - bare httpx): {(health['target'] - health['raw']) * 1e6:.0f} us "
              f"on health, {(listing['target'] - listing['raw']) * 1e6:.0f} us on list")
        print(f"stall note on the reference: {stall_line(stall_samples(ref))}")
    finally:
        ref.close()

    from memconform.suites.omp.mutants import MUTANTS

    stalled = MUTANTS["nagle_stall"]()
    try:
        print(f"stall note on the nagle_stall mutant: {stall_line(stall_samples(stalled))}")  # type: ignore[arg-type]
    finally:
        stalled.close()

    try:
        from memconform.core.registry import REGISTRY, load_suite
        from memconform.run.session import execute_run

        load_suite("omp")
    except Exception as exc:  # the suite is written by another helper; say why this part is skipped
        print(f"OMP suite timing skipped: the suite does not load ({type(exc).__name__}: {exc})")
        return
    core = [c.id for c in REGISTRY.for_suite("omp") if c.level == "core"]
    with tempfile.TemporaryDirectory() as tmp:
        for label, ids in (("OMP-Core checks", core), ("whole omp suite", None)):
            t = time.perf_counter()
            outcome = execute_run(["omp"], None, Profile.named("ci"), Path(tmp) / label.replace(" ", "-"), check_ids=ids)
            c = outcome.counts()
            print(f"{label} vs reference, ci profile, in process: {time.perf_counter() - t:.2f} s (goal < 60 s); "
                  f"{c['passed']} passed, {c['failed']} failed, {c['errored']} errored, {c['skipped']} skipped")
        t = time.perf_counter()
        cli = subprocess.run([sys.executable, "-m", "memconform.cli.main", "run", "--suite", "omp", "--profile", "ci",
                              "--report-dir", str(Path(tmp) / "cli")], capture_output=True, text=True, cwd=ROOT, timeout=600)
        print(f"memconform run --suite omp --profile ci (whole command): {time.perf_counter() - t:.2f} s, exit {cli.returncode}")


if __name__ == "__main__":
    main()
