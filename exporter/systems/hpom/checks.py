"""The HPOM guide's checks: the Table 1 server variables, and the query metrics each database guide row reads.

Pure data and functions, no I/O: the collector hands ``evaluate`` the values ``ovconfget`` printed, and calls
``require_queries`` on a site's ``queries_file`` so that dropping a query cannot lose a guide row silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

from ...machine.numbers import decimal, integer

if TYPE_CHECKING:
    from ..oracle.querymetrics import QuerySpec


def _int(value: str) -> int | None:
    return integer(value.strip(), "+-")  # the strict reader (machine/numbers.py)


def _number(value: str) -> float | None:
    """A setting's value as a number: the strict reader's plain decimal ("nan", "inf", 1e400 are no setting's
    value)."""
    return decimal(value.strip(), "+-", bare_point=True)


def version_tuple(text: str) -> tuple[int, ...] | None:
    """``8.22`` -> (8, 22); ``08.30.040`` -> (8, 30, 40); None for text that is not a dotted version."""
    parts = text.strip().split(".")
    if not parts or not all(part.isascii() and part.isdigit() for part in parts):  # int('²') raises
        return None
    return tuple(int(part) for part in parts)


@dataclass(frozen=True)
class Variable:
    """A server configuration variable and what the guide says of it."""

    name: str
    default: str | None  # the documented default when unset; None when the guide gives none
    follows_guide: Callable[[str], bool] | None  # None: the guide makes no recommendation
    guide: str
    since: str | None = None  # the HPOM version that introduced it: older servers are not judged on it
    needs: tuple[str, str] | None = None  # (variable, value) that must hold for this value to work
    values_since: tuple[tuple[str, str], ...] = ()  # (value, version): a value that older servers do not have


# HP Operations Manager for UNIX 8.21/8.30 Performance Guide, Management Server Configuration Variables, Table 1
# and its footnotes.  Table 1 spells two names differently from the rest of the guide (OPCMMSGM_USE_GUI_THREAD,
# OPC_UPDOWN_COMMIT_COUNT); the variables HPOM reads are OPCMSGM_USE_GUI_THREAD and OPC_UPDWN_COMMIT_COUNT.
VARIABLES = (
    Variable("OPCMSGM_USE_GUI_THREAD", "FALSE", lambda v: v.upper() in ("TRUE", "NO_RPC"),
             "TRUE (Table 1: 310 -> 410 msg/s), or NO_RPC from 8.22 (footnote 4)",
             values_since=(("NO_RPC", "8.22"),)),
    Variable("OPC_DIRECT_ACKN_LIMIT", "50", lambda v: _int(v) == 0,
             "0: mark acknowledged messages only, move them to history later (Table 1; Message Acknowledgment)"),
    Variable("OPC_UPDWN_COMMIT_COUNT", "100", lambda v: (_int(v) or 0) >= 1000,
             "1000 or more: history download 367 -> 518 msg/s (Table 1; Table 27)"),
    # Test: Suppressing Message Duplicates, Conclusions: the auto key feature came with the 8.31 server patch (a
    # hotfix on the 8.30 test server), "enabled by default": an older server has no such default.
    Variable("OPC_CREATE_AUTO_KEYS", "TRUE", lambda v: v.upper() in ("TRUE", "YES", "1"),
             "on (the default from 8.31): duplicate suppression without keys falls to 28-137 msg/s (Tables 12-13)",
             since="8.31"),
    # Footnotes 1 and 4 of Test: Varying the Number of Active Java GUIs: 8.22 adds OPCUIWWW_BULK_MODE = TRUE and
    # OPCUIWWW_NEW_MSG_NO_DB = TRUE, the latter only with OPCMSGM_USE_GUI_THREAD = NO_RPC.  The guide gives no
    # default for either; both are new switches, read here as off (FALSE) while unset.
    Variable("OPCUIWWW_BULK_MODE", "FALSE", lambda v: v.upper() == "TRUE",
             "TRUE from 8.22 (footnotes 1 and 4; the guide expects a gain but did not test it)", since="8.22"),
    Variable("OPC_ACK_MOVE_INTERVAL", None, None, "no recommendation; the acknowledgement tests set 0"),
    Variable("OPCUIWWW_NEW_MSG_NO_DB", "FALSE", lambda v: v.upper() == "TRUE",
             "TRUE from 8.22, together with OPCMSGM_USE_GUI_THREAD=NO_RPC, its prerequisite (footnote 4; not "
             "tested by the guide)", since="8.22", needs=("OPCMSGM_USE_GUI_THREAD", "NO_RPC")),
)


def watched(extra: list[str]) -> tuple[Variable, ...]:
    """The Table 1 variables, then the site's extra ones (exposed without a recommendation)."""
    known = {v.name for v in VARIABLES}
    return VARIABLES + tuple(Variable(name, None, None, "") for name in extra if name not in known)


@dataclass(frozen=True)
class Reading:
    """One variable as the server has it: set, the documented default, or unset (no default known)."""

    variable: Variable
    value: str
    origin: str  # "set", "default" or "unset"
    number: float | None  # the value as a number, when it is one
    follows_guide: bool | None  # None when the guide recommends nothing or the variable is unset


def _current(variables: tuple[Variable, ...], values: dict[str, str], name: str) -> str:
    """A variable's value as the server has it: set, else its documented default, else empty."""
    if name in values:
        return values[name]
    return next((v.default or "" for v in variables if v.name == name), "")


def evaluate(variables: tuple[Variable, ...], values: dict[str, str], version: str | None = None) -> list[Reading]:
    """Judge each variable against the guide, from ``ovconfget`` values (an unset variable has its default).

    A variable introduced after ``version`` (the server's HPOM version, when the site states it) is not judged and
    has no default there: the server cannot have it (a value set anyway, e.g. by a hotfix, is shown as set).  A value
    newer than the server's version (NO_RPC before 8.22: Test: Varying the Number of Active Java GUIs, footnote 4)
    does not follow the guide.  A value that needs another variable's value (OPCUIWWW_NEW_MSG_NO_DB=TRUE needs
    OPCMSGM_USE_GUI_THREAD=NO_RPC) follows the guide only with it."""
    known = version_tuple(version) if version else None
    readings = []
    for var in variables:
        older = bool(var.since and known is not None and known < (version_tuple(var.since) or ()))
        if var.name in values:
            value, origin = values[var.name], "set"
        elif var.default is not None and not older:
            value, origin = var.default, "default"
        else:
            value, origin = "", "unset"
        follows = None if var.follows_guide is None or origin == "unset" else var.follows_guide(value)
        if follows is not None and older:
            follows = None  # older than the variable: nothing to advise
        for newer, since in var.values_since:
            if follows and known is not None and value.strip().upper() == newer and \
                    known < (version_tuple(since) or ()):
                follows = False  # a value this server's version does not have
        if follows and var.needs:
            other, wanted = var.needs
            follows = _current(variables, values, other).strip().upper() == wanted
        readings.append(Reading(var, value, origin, _number(value), follows))
    return readings


# The query metrics each database guide row reads (its alert, or its dashboard panel), by guide row and use.
QUERY_CHECKS: dict[str, tuple[str, ...]] = {
    "HPOM-ACK (alert MiddlewareHpomAcknowledgementBulkTooLarge)": ("middleware_hpom_window_acknowledged_messages",),
    "HPOM-ACK (alert MiddlewareHpomAcknowledgedBacklog)": ("middleware_hpom_acknowledged_active_messages",),
    "HPOM-CMA (alert MiddlewareHpomCustomAttributesOverLimit)": ("middleware_hpom_cma_max_per_message",
                                                                 "middleware_hpom_messages_over_cma_limit"),
    "HPOM-ACTIVE (alert MiddlewareHpomActiveMessagesHigh)": ("middleware_hpom_active_messages",),
    "HPOM-AUTOKEYS (alert MiddlewareHpomMessagesWithoutKeys)": ("middleware_hpom_active_messages_without_key",
                                                                "middleware_hpom_active_messages"),
    "HPOM-THROUGHPUT (dashboard: messages received per second)": ("middleware_hpom_window_received_messages",
                                                                  "middleware_hpom_window_seconds"),
    "HPOM-HISTDL (dashboard: history messages and download rate)": ("middleware_hpom_history_messages",),
    "HPOM-MOM (recording rule and dashboard: MoM acknowledgement sync estimate)": (
        "middleware_hpom_forwarded_window_acknowledged_messages", "middleware_hpom_forwarded_active_messages"),
}


def require_queries(queries: Sequence[QuerySpec], source: str) -> None:
    """Refuse a query list lacking a metric that a guide row in ``QUERY_CHECKS`` reads, naming the row."""
    produced = {metric.name for query in queries for metric in query.metrics}
    problems = [f"{check} reads {', '.join(m for m in needs if m not in produced)}"
                for check, needs in QUERY_CHECKS.items() if not set(needs) <= produced]
    if problems:
        raise ValueError(f"{source}: no query produces what these guide checks read: {'; '.join(problems)} "
                         "(keep those queries from the built-in queries.yaml)")
