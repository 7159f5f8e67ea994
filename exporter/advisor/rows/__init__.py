"""Every advice row of the guides, by system: for each, what the guide recommends, what it measured, where, the
standard remedy (the guide's own command where it gives one) and a judge that reads the snapshot.

A judge reads only the collectors' last samples (``model.Snapshot``): the ``*_follows_guide`` series the collectors
already compute where they exist, the raw figures otherwise (process groups, host memory, kernel parameters).
Remedies are filled in with the live values (group numbers, sizes, the mount's own source and options); where the
exporter cannot know a value (a redo log path) the command keeps a ``<placeholder>``. Rows the guides state as
live limits (HPOM-ACK, -QUEUE, MQ-CPU, MQ-DEPTH, DOM-*) are alerts, not advice: docs/advisor.md. HPOM-CMA and
HPOM-ACTIVE are both: an alert on the live count, and advice because the cure is configuration (policies, correlation).

One module per system holds its rows (``hpom.py``, ``oracle.py``, ``ibmmq.py``, ``vhi.py``; what they share, the
formatting of figures, in ``common.py``); :data:`ROWS` assembles them here, and ``report.py`` judges them.
"""

from __future__ import annotations

from ..model import Row
from . import hpom, ibmmq, oracle, vhi

ROWS: tuple[Row, ...] = (*hpom.ROWS, *oracle.ROWS, *ibmmq.ROWS, *vhi.ROWS)

# The advice rows of the guides; tests/advisor/test_advisor.py checks that each appears with a status.
ADVICE_ROWS = tuple(row.id for row in ROWS)
