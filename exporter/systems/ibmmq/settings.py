"""The IBM MQ collector's configuration: the queue managers to read and, per queue manager, its back-end and what
to report.  Apart from the collector so that validating a configuration imports neither the collector nor its
back-ends (exporter.registry imports this module when the configuration gives the section; the collector only
when it is enabled); the PCF TLS check imports pcf.py only where PCF over TLS is configured."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from ...core.config import StaticLabelMap, labels_field
from ...core.secrets import PasswordSettings
from ...core.settings import CollectorSettings, Duration
from ...machine.remote import check_remote_arguments
from .model import OBJECT_NAME_PATTERN


class QueueManagerEntry(PasswordSettings):
    name: str = Field(..., pattern=OBJECT_NAME_PATTERN, description="Queue manager name (the `qmgr` label).")
    labels: StaticLabelMap = labels_field("Labels added to every series of this queue manager (those with its "
                                          "`qmgr` label), e.g. env: prod, app: payments (docs/configuration.md).")
    backend: Literal["rest", "pcf", "runmqsc"] = Field("rest", description="How to read it.")
    timeout: Duration = Field(10.0, description="Timeout of each request or command, seconds.")
    include: list[str] = Field(default_factory=lambda: ["*"], description="Queue name patterns to report (glob; "
                               "a `!` in front excludes, as in mq_prometheus's monitoredQueues; also a comma list).")
    exclude: list[str] = Field(default_factory=lambda: ["SYSTEM.*", "AMQ.*"],
                               description="Queue name patterns to leave out (glob; an exclusion always wins).")
    channels_include: list[str] = Field(
        default_factory=lambda: ["*"], description="Channel name patterns to report (glob; `!` in front excludes; "
                                                   "also a comma list such as 'APP.*,!APP.TEST*').")
    channels_exclude: list[str] = Field(
        default_factory=lambda: ["SYSTEM.*", "AMQ.*"],
        description="Channel name patterns to leave out (glob; an exclusion always wins): the SYSTEM.DEF.* and "
                    "SYSTEM.AUTO.* channels by default.")
    show_inactive_channels: bool = Field(
        True, description="Report every defined channel (DISPLAY CHANNEL) without a status record as status 0 "
                          "(INACTIVE); client-connection (CLNTCONN) definitions never have one and are left out. "
                          "mq_prometheus's showInactiveChannels, which is off by default there.")
    channel_jobname_label: bool = Field(
        False, description="Fill the `jobname` label of the channel series (the MCA job: one series per client "
                           "connection of a SVRCONN channel, hence off: the label stays empty).")
    time_zone: str | None = Field(
        None, description="The queue manager's time zone (IANA name, e.g. Europe/Berlin): the dates it prints "
                          "(last put/get, last message, start) are its local time. Default: the exporter's own.")
    # rest
    url: str | None = Field(None, description="rest: mqweb base URL, e.g. https://mqhost:9443.")
    api_version: Literal["v1", "v2", "v3"] = Field("v2", description="rest: REST API version (v2/v3 use MQSC JSON).")
    username: str | None = Field(None, description="rest/pcf: user.")
    client_cert: str | None = Field(None, description="rest: client certificate (PEM) instead of a password.")
    client_key: str | None = Field(None, description="rest: key of the client certificate.")
    ca_file: str | None = Field(None, description="rest: CA bundle for mqweb's certificate.")
    verify_tls: bool = Field(True, description="rest: verify mqweb's certificate (leave on).")
    # pcf
    channel: str | None = Field(None, description="pcf: SVRCONN channel, e.g. MONITOR.SVRCONN.")
    conn_name: str | None = Field(None, description="pcf: CONNAME, e.g. mqhost(1414).")
    ccdt: str | None = Field(None, description="pcf: path or URL (file, http, https, ftp) of a JSON or binary CCDT "
                                               "naming the channel, its CONNAME and cipher, instead of channel/"
                                               "conn_name (MQCCDTURL).")
    key_repository: str | None = Field(None, description="pcf TLS: the client's key database without .kdb, e.g. "
                                                         "/etc/mq/key (key.kdb and its stash key.sth; MQSSLKEYR).")
    cipher_spec: str | None = Field(None, description="pcf TLS: the channel's SSLCIPH, e.g. "
                                                      "ANY_TLS13_OR_HIGHER (needs key_repository; not with ccdt).")
    certificate_label: str | None = Field(None, description="pcf TLS: label of the client certificate in the key "
                                                            "repository (default ibmwebspheremq<user>).")
    # runmqsc
    runmqsc: str = Field("/opt/mqm/bin/runmqsc", description="runmqsc: the runmqsc binary.")
    dspmq: str = Field("/opt/mqm/bin/dspmq", description="runmqsc: the dspmq binary.")
    command_prefix: list[str] = Field(
        default_factory=list,
        description="runmqsc: put in front of dspmq, runmqsc and amqsrua, e.g. [ssh, -o, BatchMode=yes, mqhost1], "
                    "to read a queue manager on another host (its `qmgr` label identifies it; docs/deploy-server.md).")
    # put/get counts
    statistics: Literal["publications", "reset_qstats", "off"] = Field(
        "publications",
        description="pcf/runmqsc: where put/get counts come from. publications: the queue manager's resource-"
                    "statistics topics (STATMQI, STATQ; MQ 9.0+), through the back-end's own non-durable "
                    "subscriptions (pcf) or amqsrua (runmqsc); other readers lose nothing. reset_qstats (pcf only): "
                    "RESET QSTATS per queue, DESTRUCTIVE: it clears the counters for every other tool reading them. "
                    "rest: mqweb offers neither, the counters are absent.")
    statistics_max_queues: int = Field(
        50, ge=0, le=1000, description="pcf/runmqsc: at most this many queues (after include/exclude, by name) get "
                                       "per-queue counts: two STATQ subscriptions (two object handles, mind MAXHANDS) "
                                       "each; amqsrua takes 48 at most.")
    monitor_interval: Duration = Field(
        10.0, description="pcf/runmqsc: the queue manager's MONINT, seconds between its statistics publications "
                          "(10 by default; ALTER QMGR MONINT).")
    amqsrua: str = Field("/opt/mqm/samp/bin/amqsrua",
                         description="runmqsc: IBM's amqsrua sample (put/get counts and the recovery log's DISK/Log "
                                     "figures); not installed here: no counts.")
    # MQ-IO: where the queue manager keeps its queue files and its log, when it runs on this host
    data_path: str | None = Field(None, description="The queue manager's data directory on this host (qm.ini "
                                                    "DataPath, e.g. /var/mqm/qmgrs/QM1): with log_path, the disks "
                                                    "holding them (MQ-IO advice); leave unset for a remote one.")
    log_path: str | None = Field(None, description="The queue manager's log directory on this host (qm.ini Log "
                                                   "stanza LogPath, e.g. /var/mqm/log/QM1).")

    @field_validator("include", "exclude", "channels_include", "channels_exclude", mode="before")
    @classmethod
    def _comma_list(cls, value: object) -> object:
        # mq_prometheus writes its patterns as one comma list ("APP.*,!APP.TEST*")
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("time_zone")
    @classmethod
    def _zone(cls, value: str | None) -> str | None:
        if value is not None:
            from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(f"unknown time zone {value!r} (an IANA name such as Europe/Berlin)") from None
        return value

    @model_validator(mode="after")
    def _backend_settings(self) -> QueueManagerEntry:
        if self.backend == "rest" and not self.url:
            raise ValueError(f"queue manager {self.name}: the rest back-end needs url")
        if self.backend == "pcf" and not (self.channel and self.conn_name) and not self.ccdt:
            raise ValueError(f"queue manager {self.name}: the pcf back-end needs channel and conn_name (or ccdt)")
        if self.backend == "runmqsc":
            check_remote_arguments(self.command_prefix, {"runmqsc": self.runmqsc, "dspmq": self.dspmq,
                                                         "amqsrua": self.amqsrua})
        tls = {k: v for k in ("ccdt", "key_repository", "cipher_spec", "certificate_label")
               if (v := getattr(self, k)) is not None}
        if tls and self.backend != "pcf":
            raise ValueError(f"queue manager {self.name}: {', '.join(tls)}: pcf back-end only (rest: ca_file, "
                             "client_cert)")
        if tls:
            from .pcf import tls_settings  # only where PCF over TLS is configured

            try:
                tls_settings(self.ccdt, self.key_repository, self.cipher_spec, self.certificate_label,
                             self.channel, self.conn_name)
            except ValueError as exc:
                raise ValueError(f"queue manager {self.name}: {exc}") from None
        if self.statistics == "reset_qstats" and self.backend != "pcf":
            raise ValueError(f"queue manager {self.name}: statistics reset_qstats needs the pcf back-end (RESET "
                             "QSTATS is a PCF command on distributed platforms)")
        return self


class IbmmqSettings(CollectorSettings):
    enabled: bool = Field(False, description="Run this collector.")
    interval: Duration = Field(30.0, description="Seconds between collections.")
    timeout: Duration = Field(25.0, description="Seconds before a collection counts as failed.")
    max_series: int = Field(200000, ge=1, description="A collection producing more series than this is refused "
                                                      "(a queue gives up to 15 with queue monitoring on: "
                                                      "10,000 queues about 150,000).")
    queue_managers: list[QueueManagerEntry] = Field(default_factory=list, description="The queue managers to read.")

    @model_validator(mode="after")
    def _unique(self) -> IbmmqSettings:
        names = [q.name for q in self.queue_managers]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"queue manager names must be unique: {dupes}")
        if self.enabled and not self.queue_managers:
            raise ValueError("enabled, but no queue_managers are configured")
        return self
