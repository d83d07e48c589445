"""memory.jsonl.lock: created exclusively before writing, removed after, waited for with exponential backoff."""

import os
import random
import secrets
import time
from contextlib import contextmanager

from entry import Refused

FIRST_DELAY = 0.01
LONGEST_DELAY = 0.4


def lock_timeout() -> float:
    """How long a writer waits for another app's lock before refusing; EMP2_LOCK_TIMEOUT seconds, default 3."""
    try:
        return max(0.0, float(os.environ.get("EMP2_LOCK_TIMEOUT", "3")))
    except ValueError:
        return 3.0


def try_create(lock_path: str, token: str) -> bool:
    try:
        descriptor = os.open(lock_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(descriptor, "w") as handle:
        handle.write(f"{os.getpid()} {int(time.time() * 1000)} {token}\n")
    return True


def release(lock_path: str, token: str) -> None:
    """Remove the lock only if it is still ours (never another app's lock)."""
    try:
        with open(lock_path, encoding="utf-8", errors="replace") as handle:
            if token not in handle.read():
                return
        os.remove(lock_path)
    except FileNotFoundError:
        pass


def acquire(lock_path: str, token: str, timeout: float, give_up_at_once: bool) -> None:
    deadline = time.monotonic() + timeout
    delay = FIRST_DELAY
    while not try_create(lock_path, token):
        if give_up_at_once or time.monotonic() + delay > deadline:
            raise Refused(f"{lock_path} is held by another writer")
        time.sleep(delay * random.uniform(0.8, 1.2))
        delay = min(delay * 2, LONGEST_DELAY)


@contextmanager
def locked(memory_path: str, bugs: frozenset = frozenset()):
    """Hold memory.jsonl.lock for the body; a stale lock is never broken (the spec gives no rule for it)."""
    if "ignore_lock" in bugs:
        yield
        return
    lock_path = memory_path + ".lock"
    directory = os.path.dirname(os.path.abspath(memory_path))
    os.makedirs(directory, exist_ok=True)
    token = secrets.token_hex(8)
    acquire(lock_path, token, lock_timeout(), give_up_at_once="lock_no_wait" in bugs)
    try:
        yield
    except Refused:
        if "lock_left_behind" not in bugs:
            release(lock_path, token)
        raise
    except BaseException:
        release(lock_path, token)
        raise
    release(lock_path, token)
