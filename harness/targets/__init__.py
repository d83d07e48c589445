"""Targets: one small interface to the implementation under test, chosen by a URL-like string.

    http://host:port/...      HttpTarget      (httpx; timeouts, size cap, no redirects)
    cmd:TEMPLATE | cmd:@FILE  CommandTarget   (a command per operation; every process it starts is ended after each call)
    cmd-lines:TEMPLATE        LineCommandTarget (one command for the run, JSON lines over stdin/stdout; lines.py)
    dir:PATH | dir:@FILE      DropDirTarget   (file drop into PATH/inbox, replies read from PATH/outbox)
    python:module:attr        PythonTarget    (an in-process object with one method per operation)
    reference:NAME            the embedded reference of suite NAME (SuiteSpec.reference), in process
"""

from .base import Rejected, Reply, Route, Target
from .kinds import TARGET_KINDS, is_http, open_target

__all__ = ["Rejected", "Reply", "Route", "Target", "open_target", "TARGET_KINDS", "is_http"]
