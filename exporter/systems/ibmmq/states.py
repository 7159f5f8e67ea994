"""Queue-manager states: one table shared by every IBM MQ back-end.

Each back-end names the state of a queue manager its own way: ``dspmq`` prints ``STATUS(Running elsewhere)``
(``RUNNING ELSEWHERE`` with ``-n``, ``ENDED PREEMPTIVELY`` on 7.5 and ``ENDED PRE-EMPTIVELY`` from 8.0), mqweb's
REST API answers ``runningElsewhere``, PCF answers the MQQMSTA code.  :func:`qmgr_state` reads any of these
spellings (case, blanks, hyphens and underscores do not matter) and :func:`qmgr_state_from_code` the codes, and
both return the same :class:`QmgrState` for the same state, so the three back-ends report the same value.

``status`` is what ``ibmmq_qmgr_status`` reports, the MQQMSTA values IBM's mq_prometheus uses (1 starting,
2 running, 3 quiescing, 4 standby) and 0 for a queue manager that is not available (ended, being deleted, state
not available).  Healthy standbys are 4, never 0: the standby instance of a multi-instance queue manager
(``Running as standby``), the other nodes of a replicated (RDQM) or multi-instance queue manager active
elsewhere (``Running elsewhere``), a Native HA replica (``Replica``) and the leader of a Native HA recovery group
(``Recovery group leader``).  Transitional states get the value of their direction: ``Starting`` and Native HA's
election (``Negotiating``) 1, ``Quiescing``, ``Ending immediately`` and ``Ending pre-emptively`` 3 (the queue
manager is still up and on its way down; ``Ended ...`` is 0).

``role`` is the instance's part in a high-availability group, for ``middleware_ibmmq_qmgr_ha_role``:
``active`` (this instance holds the queue manager, also while starting or ending), ``standby`` (ready to take
over, or the queue manager is served elsewhere), ``replica`` (a Native HA or recovery-group replica), ``none``
(not running here) and ``unknown`` (the state does not say, e.g. during an election or when unreachable).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ROLES = ("active", "standby", "replica", "none", "unknown")

# MQQMSTA_* (cmqcfc.h): the PCF/REST codes; mq_prometheus reports these, and 0 when the queue manager is not
# available.
MQQMSTA_STARTING = 1
MQQMSTA_RUNNING = 2
MQQMSTA_QUIESCING = 3
MQQMSTA_STANDBY = 4
NOT_AVAILABLE = 0
# ibmmq_qmgr_status's values in words, as the dashboards show them (dashboards/build.py reads this table).
STATUS_WORDS = {NOT_AVAILABLE: "ended / unreachable", MQQMSTA_STARTING: "starting", MQQMSTA_RUNNING: "running",
                MQQMSTA_QUIESCING: "quiescing", MQQMSTA_STANDBY: "standby"}


@dataclass(frozen=True)
class QmgrState:
    name: str  # canonical name: dspmq's words in upper case (``RUNNING ELSEWHERE``), PCF's for ``STANDBY``
    status: int  # ibmmq_qmgr_status
    role: str  # one of ROLES

    @property
    def running(self) -> bool:
        """True when the queue manager runs here and answers commands (the only state whose queues are read)."""
        return self.status == MQQMSTA_RUNNING


def _state(name: str, status: int, role: str) -> QmgrState:
    assert role in ROLES, role
    return QmgrState(name, status, role)


# name -> state.  The other spellings of each state are in _ALIASES.
STATES: dict[str, QmgrState] = {s.name: s for s in (
    _state("STARTING", MQQMSTA_STARTING, "active"),
    _state("RUNNING", MQQMSTA_RUNNING, "active"),
    _state("QUIESCING", MQQMSTA_QUIESCING, "active"),
    _state("ENDING IMMEDIATELY", MQQMSTA_QUIESCING, "active"),
    _state("ENDING PREEMPTIVELY", MQQMSTA_QUIESCING, "active"),
    _state("RUNNING AS STANDBY", MQQMSTA_STANDBY, "standby"),
    _state("RUNNING ELSEWHERE", MQQMSTA_STANDBY, "standby"),
    _state("STANDBY", MQQMSTA_STANDBY, "standby"),  # MQQMSTA_STANDBY (PCF), DISPLAY QMSTATUS
    _state("REPLICA", MQQMSTA_STANDBY, "replica"),
    _state("RECOVERY GROUP LEADER", MQQMSTA_STANDBY, "replica"),
    _state("NEGOTIATING", MQQMSTA_STARTING, "unknown"),
    _state("ENDED NORMALLY", NOT_AVAILABLE, "none"),
    _state("ENDED IMMEDIATELY", NOT_AVAILABLE, "none"),
    _state("ENDED PREEMPTIVELY", NOT_AVAILABLE, "none"),
    _state("ENDED UNEXPECTEDLY", NOT_AVAILABLE, "none"),
    _state("ENDED", NOT_AVAILABLE, "none"),  # mqweb's plain ``ended``
    _state("BEING DELETED", NOT_AVAILABLE, "none"),
    _state("STATUS NOT AVAILABLE", NOT_AVAILABLE, "unknown"),
    _state("UNKNOWN", NOT_AVAILABLE, "unknown"),  # unrecognised, or no answer
)}

# Other spellings, as keys (see _key): mqweb's camel case folds to the same key as dspmq's words, so only
# genuinely different words are listed.
_ALIASES = {
    "statenotavailable": "STATUS NOT AVAILABLE",  # mqweb
    "notavailable": "STATUS NOT AVAILABLE",  # older releases (Checkmk's table)
    "endedpreemptive": "ENDED PREEMPTIVELY",
    "endingpreemptive": "ENDING PREEMPTIVELY",
    "recoveryleader": "RECOVERY GROUP LEADER",
}

_NOT_LETTERS = re.compile(r"[^a-z]+")


def _key(text: str) -> str:
    """``Running as standby``, ``RUNNING AS STANDBY``, ``runningAsStandby``, ``running_as_standby`` ->
    ``runningasstandby``; ``PRE-EMPTIVELY`` and ``PREEMPTIVELY`` alike."""
    return _NOT_LETTERS.sub("", text.lower())


_BY_KEY: dict[str, QmgrState] = {_key(name): state for name, state in STATES.items()}
_BY_KEY.update({key: STATES[name] for key, name in _ALIASES.items()})

_BY_CODE = {MQQMSTA_STARTING: STATES["STARTING"], MQQMSTA_RUNNING: STATES["RUNNING"],
            MQQMSTA_QUIESCING: STATES["QUIESCING"], MQQMSTA_STANDBY: STATES["STANDBY"]}

UNKNOWN = STATES["UNKNOWN"]


def qmgr_state(text: object) -> QmgrState:
    """The state named by ``text`` in any back-end's spelling; unrecognised text is UNKNOWN (0, unknown),
    except that an unlisted ``Ended ...`` is ENDED (0, none) and an unlisted ``Ending ...`` is QUIESCING."""
    if not isinstance(text, str):
        return UNKNOWN
    key = _key(text)
    state = _BY_KEY.get(key)
    if state is not None:
        return state
    if key.startswith("ended"):
        return STATES["ENDED"]
    if key.startswith("ending"):
        return STATES["QUIESCING"]
    return UNKNOWN


def qmgr_state_from_code(code: object) -> QmgrState:
    """The state of an MQQMSTA code (PCF's MQIACF_Q_MGR_STATUS); other values are UNKNOWN."""
    if isinstance(code, bool) or not isinstance(code, int):
        return UNKNOWN
    return _BY_CODE.get(code, UNKNOWN)


# ``ROLE(...)`` of ``dspmq -o nativeha`` and of 9.4's ``dspmq -o all`` (``Not configured`` says nothing).
_NATIVE_HA_ROLES = {"active": "active", "replica": "replica", "unknown": "unknown"}


def role_from_native_ha(text: object) -> str | None:
    """The role a dspmq ``ROLE(Active|Replica|Unknown)`` field names, or None (``Not configured``, blank)."""
    return _NATIVE_HA_ROLES.get(_key(text)) if isinstance(text, str) else None
