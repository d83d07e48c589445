"""One executable model of an OMP server (§2.1, §3.3, §4, §5): pure Python, no I/O.

The model holds what the spec says a server's state is (every memory of every user, with every field;
the acknowledged writes as an audit trail) and, for any request in any state, the set of answers
acceptable under the suite's readings (errata.md). Where the spec is open, every accepted reading's
answer is in the set; a `Readings` built from the suite's options narrows it to the pinned reading.
Answers are judged by `Model.accepts(request, reply)`: None, or a `Reason` naming what each reading
expected. `Model.apply` advances the state from an accepted answer (ids and timestamps are the target's
own, so the state follows the answers it accepted); `Model.step` does both.

Ranking the spec leaves open is a set or partial-order constraint, never an exact order: a keyword
page is any page-sized subset of the matches; a list page is the matching memories in sort order,
memories whose sort stamps tie in any order among themselves.

A model is `complete` when its memories are everything the requests can see (a fresh server, or
requests scoped by a run-unique tag or word); otherwise (a live server holding other data) it judges
only what its knowledge decides: served memories fit the filters, the limit, the order, and every
memory it knows is served as it is.
"""

from .base import Check, Readings, Reason, Request
from .model import Model
from .pages import Filters, ListReading, comma_tags, list_readings, ordered, sort_key
from .shapes import fields_differ, memory_shape
from .state import ImportEffect

__all__ = ["Check", "Filters", "ImportEffect", "ListReading", "Model", "Reason", "Readings", "Request", "comma_tags",
           "fields_differ", "list_readings", "memory_shape", "ordered", "sort_key"]
