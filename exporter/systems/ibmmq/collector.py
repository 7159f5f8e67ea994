"""IBM MQ queue managers: queue depths and maximum depths, queue-manager and channel status, each queue manager
read through its own back-end (mqweb REST, PCF via ``ibmmq``, or ``runmqsc`` text), and put/get counts from the
queue manager's resource-statistics publications where the back-end can read them (PCF subscriptions, amqsrua).

Metric names and labels are those of IBM's mq_prometheus, so dashboards built for it keep working.  Queue managers
are read at once through the core fan-out, each under its own deadline: one that fails, hangs or returns garbage
costs only its own samples (``middleware_ibmmq_backend_success`` 0, the error in /api/v1/collectors).
"""

from __future__ import annotations

import fnmatch
import re
import time
from collections import Counter
from datetime import datetime
from typing import Literal

from pydantic import Field, field_validator, model_validator

from ...core.collector import Collector, Context
from ...core.config import StaticLabelMap, labels_field
from ...core.fanout import Target, fan_out
from ...core.metrics import ConfiguredLabels, MetricBatch, MetricSpec
from ...core.secrets import PasswordSettings, SecretUnavailable
from ...core.settings import CollectorSettings, Duration
from ...machine.remote import check_remote_arguments
from . import DESCRIPTION, NAME
from .model import (
    CHANNEL_STATUS_CODES,
    CHANNEL_SUBSTATE_CODES,
    OBJECT_NAME_PATTERN,
    SERVICE_STATUS_CODES,
    Backend,
    BackendError,
    ChannelDefinition,
    ChannelState,
    QmgrHealth,
    QmgrSnapshot,
    QueueStatus,
    Throughput,
    channel_status_squash,
    channel_type_word,
)
from .states import ROLES, qmgr_state


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
                                       "each; amqsrua takes 49 at most.")
    monitor_interval: Duration = Field(
        10.0, description="pcf/runmqsc: the queue manager's MONINT, seconds between its statistics publications "
                          "(10 by default; ALTER QMGR MONINT).")
    amqsrua: str = Field("/opt/mqm/samp/bin/amqsrua",
                         description="runmqsc: IBM's amqsrua sample (put/get counts); not installed here: no counts.")
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


Q = ("qmgr", "queue")
# mq_prometheus's channel labels we have (its platform, description and sslciph are left out: description and
# sslciph change the series when edited; jobname stays empty unless channel_jobname_label is set)
CH = ("qmgr", "channel", "type", "connname", "rqmname", "jobname")
BK = ("qmgr", "backend")
MQP = "mq_prometheus: same name"  # where a name comes from (docs/metrics.md); ours are middleware_ibmmq_*
MQPC = "mq_prometheus: "  # + its name, for counters (its Go client writes them without _total)

QMGR_STATUS = MetricSpec(
    "ibmmq_qmgr_status", "gauge", "Queue manager status (MQQMSTA: 1 starting, 2 running, 3 quiescing, "
    "4 standby; 0 ended or unreachable).", ("qmgr",),
    MQP + "; 4 also for healthy standbys: running as standby, running elsewhere, Native HA replica")
QMGR_HA_ROLE = MetricSpec(
    "middleware_ibmmq_qmgr_ha_role", "gauge", "High-availability role of the queue manager's instance as this "
    "exporter sees it: 1 for the current role (active, standby, replica, none, unknown), 0 for the others.",
    ("qmgr", "role"), 'no active instance of a pair: sum by (qmgr) (...{role="active"}) == 0')
QUEUE_DEPTH = MetricSpec(
    "ibmmq_queue_depth", "gauge", "Messages on the queue (CURDEPTH).", Q,
    MQP + "; MQ-DEPTH: the report held the input queue at 100; deriv() > 0 is growth")
QUEUE_MAX_DEPTH = MetricSpec("ibmmq_queue_attribute_max_depth", "gauge", "Maximum depth of the queue (MAXDEPTH).", Q,
                             MQP)
QUEUE_DEPTH_RATIO = MetricSpec(
    "ibmmq_queue_depth_ratio", "gauge", "Depth as a share of the maximum depth (0-1).", Q,
    "MQ-DEPTH: alert over e.g. 0.8")
QUEUE_OLDEST_MESSAGE_AGE = MetricSpec(
    "ibmmq_queue_oldest_message_age", "gauge", "Age of the oldest message in seconds (MSGAGE; needs queue "
    "monitoring, MONQ; absent where it is off, where mq_prometheus reports 0).", Q, MQP)
QUEUE_INPUT_HANDLES = MetricSpec(
    "ibmmq_queue_input_handles", "gauge", "Handles open for input (IPPROCS): the consumers.", Q, MQP)
QUEUE_OUTPUT_HANDLES = MetricSpec(
    "ibmmq_queue_output_handles", "gauge", "Handles open for output (OPPROCS): the producers.", Q, MQP)
# Put/get counts: mq_prometheus's names for the same publication elements, as a Prometheus server stores its
# counters (OpenMetrics adds _total).
QMGR_PUTS = MetricSpec(
    "ibmmq_qmgr_interval_mqput_mqput1_total_count_total", "counter", "Messages put (MQPUT and MQPUT1) on the queue "
    "manager: STATMQI PUT 'Interval total MQPUT/MQPUT1 count' of its statistics publications, summed since the "
    "exporter started reading them (pcf, runmqsc).", ("qmgr",),
    MQPC + "ibmmq_qmgr_interval_mqput_mqput1_total_count; MQ-CPU producers: rate()")
QMGR_GETS = MetricSpec(
    "ibmmq_qmgr_interval_destructive_get_total_count_total", "counter", "Messages got (destructive MQGET) on the "
    "queue manager: STATMQI GET 'Interval total destructive get- count', summed (pcf, runmqsc).", ("qmgr",),
    MQPC + "ibmmq_qmgr_interval_destructive_get_total_count; MQ-CPU throughput per queue manager (the report's "
    "msgs/s): rate()")
QUEUE_PUTS = MetricSpec(
    "ibmmq_queue_mqput_mqput1_count_total", "counter", "Messages put to the queue: STATQ PUT 'MQPUT/MQPUT1 count' "
    "(or RESET QSTATS MsgEnqCount where opted in), summed (pcf, runmqsc).", Q,
    MQPC + "ibmmq_queue_mqput_mqput1_count; MQ-DEPTH enqueue rate: rate()")
QUEUE_GETS = MetricSpec(
    "ibmmq_queue_mqget_count_total", "counter", "Messages got from the queue: STATQ GET 'MQGET count' (or RESET "
    "QSTATS MsgDeqCount), summed (pcf, runmqsc).", Q, MQPC + "ibmmq_queue_mqget_count; MQ-DEPTH dequeue rate: rate()")
SQ = ("qmgr", "source")
STATS_SUCCESS = MetricSpec(
    "middleware_ibmmq_statistics_success", "gauge", "1 if the queue manager's put/get statistics source "
    "(publications, amqsrua, reset_qstats) was read in the last run; absent where the back-end has none.", SQ)
STATS_DURATION = MetricSpec(
    "middleware_ibmmq_statistics_duration_seconds", "gauge", "Time reading the statistics source took in the "
    "last run.", SQ)
STATS_PUBLICATIONS = MetricSpec(
    "middleware_ibmmq_statistics_publications_total", "counter", "Statistics publications (or RESET QSTATS "
    "answers) counted.", SQ)
STATS_DROPPED = MetricSpec(
    "middleware_ibmmq_statistics_publications_dropped_total", "counter", "Statistics publications left out: "
    "garbage, or an interval too long to be one MONINT.", SQ)
STATS_SUBSCRIPTIONS = MetricSpec(
    "middleware_ibmmq_statistics_subscriptions", "gauge", "Statistics subscriptions held (queues reset, for "
    "reset_qstats).", SQ)
STATS_NOT_SUBSCRIBED = MetricSpec(
    "middleware_ibmmq_statistics_queues_not_subscribed", "gauge", "Reported queues without per-queue counts "
    "(over statistics_max_queues or the MAXHANDS cap).", SQ)
STATS_HANDLES_CAP = MetricSpec(
    "middleware_ibmmq_statistics_handles_cap", "gauge", "Queues the queue manager's MAXHANDS leaves room for: the "
    "statistics subscriptions (one object handle each, two per queue) never take the connection past MAXHANDS; "
    "absent while MAXHANDS is unknown.", SQ, "below statistics_max_queues: raise MAXHANDS (ALTER QMGR MAXHANDS)")
CHANNEL_STATUS = MetricSpec(
    "ibmmq_channel_status", "gauge", "Channel status (MQCHS: 0 inactive, 1 binding, 2 starting, 3 running, "
    "4 stopping, 5 retrying, 6 stopped, 7 requesting, 8 paused, 9 disconnected, 13 initializing, 14 switching); "
    "0 also for a defined channel without status (show_inactive_channels).", CH, MQP)
CHANNEL_STATUS_SQUASH = MetricSpec(
    "ibmmq_channel_status_squash", "gauge", "Channel status squashed as mq_prometheus does: 0 stopped (inactive, "
    "disconnected, stopped, paused), 1 transitioning, 2 running.", CH,
    MQP + "; channel stopped: == 0 unless ibmmq_channel_status == 0 (inactive is normal for idle channels)")
BACKEND_SUCCESS = MetricSpec(
    "middleware_ibmmq_backend_success", "gauge", "1 if the queue manager's back-end answered in the last run.",
    BK)
BACKEND_DURATION = MetricSpec(
    "middleware_ibmmq_backend_duration_seconds", "gauge", "Time the back-end took in the last run.", BK)
QUEUES = MetricSpec("middleware_ibmmq_queues", "gauge", "Queues reported (after include/exclude).", ("qmgr",))
QUEUES_EXCLUDED = MetricSpec(
    "middleware_ibmmq_queues_excluded", "gauge", "Queues left out by include/exclude.", ("qmgr",))
FILE_SYSTEM_INFO = MetricSpec(
    "middleware_ibmmq_file_system_info", "info", "The disk holding the queue manager's queue files (use=data) or "
    "log (use=log), from data_path/log_path: the whole disk of a partition, else the device (major:minor without a "
    "block device, e.g. NFS) in the device label.", ("qmgr", "use"), "MQ-IO: data and log on the same device")

# -- channel status beyond the state (DISPLAY CHSTATUS ALL; mq_prometheus's class `channel`) ------------------------
CHANNEL_SUBSTATE = MetricSpec(
    "ibmmq_channel_substate", "gauge", "What the channel's MCA is doing (MQCHSSTATE: 0 other, 100 end of batch, "
    "200 sending, 300 receiving, 600 heartbeating, 1500 in MQPUT, 1600 in MQGET, ...).", CH, MQP)
CHANNEL_INDOUBT = MetricSpec(
    "middleware_ibmmq_channel_indoubt", "gauge", "1 if the channel is in doubt (INDOUBT(YES): a batch sent, its "
    "confirmation not yet received), 0 if not.", CH, "not in mq_prometheus; in doubt for long: == 1 for 5m")
CHANNEL_COUNTERS = [
    (name, MetricSpec(f"ibmmq_channel_{name}_total", "counter", text + " seen since the exporter started (the "
                      "channel's own count is since the instance started: the exporter adds the difference between "
                      "two reads; a new instance after the first read adds its whole count).", CH,
                      MQPC + f"ibmmq_channel_{name} (its Go client adds no _total); rate()"))
    for name, text in (
        ("messages", "Messages (MSGS; MQI calls for a SVRCONN)"), ("bytes_sent", "Bytes sent (BYTSSENT)"),
        ("bytes_rcvd", "Bytes received (BYTSRCVD)"), ("buffers_sent", "Transmission buffers sent (BUFSSENT)"),
        ("buffers_rcvd", "Transmission buffers received (BUFSRCVD)"), ("batches", "Batches completed (BATCHES)"))]
CHANNEL_COUNTER_FIELDS = ("messages", "bytes_sent", "bytes_received", "buffers_sent", "buffers_received", "batches")
CHANNEL_TIME_SINCE_MSG = MetricSpec(
    "ibmmq_channel_time_since_msg", "gauge", "Seconds since the channel last sent or received a message "
    "(LSTMSGDA/LSTMSGTI in the queue manager's time zone); absent before the first message (mq_prometheus: 0).",
    CH, MQP)
CHANNEL_START_EPOCH = MetricSpec(
    "ibmmq_channel_start_epoch", "gauge", "When the channel instance started (CHSTADA/CHSTATI), Unix time in "
    "milliseconds as mq_prometheus gives it.", CH, MQP + "; time() - this / 1000: seconds running")
CHANNEL_PAIRS = [
    (field, MetricSpec(name, "gauge", text, CH, MQP)) for field, name, text in (
        ("xmitq_time_short", "ibmmq_channel_xmitq_time_short", "Time messages waited on the transmission queue, "
         "short-term average (XQTIME, microseconds; needs channel monitoring, MONCHL)."),
        ("xmitq_time_long", "ibmmq_channel_xmitq_time_long", "The same, long-term average (microseconds)."),
        ("network_time_short", "ibmmq_channel_nettime_short", "Network time of a batch confirmation, short-term "
         "average (NETTIME, microseconds; MONCHL)."),
        ("network_time_long", "ibmmq_channel_nettime_long", "The same, long-term average (microseconds)."),
        ("batch_size_short", "ibmmq_channel_batchsz_short", "Messages per batch, short-term average (XBATCHSZ; "
         "MONCHL)."),
        ("batch_size_long", "ibmmq_channel_batchsz_long", "The same, long-term average."))]
CHANNEL_CUR_INST = MetricSpec(
    "ibmmq_channel_cur_inst", "gauge", "Running instances of the channel (status records with its name), on every "
    "series of the channel; 0 for an inactive one.", CH,
    MQP + "; near MAXINST: max by (qmgr,channel) (this) / max by (qmgr,channel) (ibmmq_channel_attribute_max_inst)")
CHANNEL_MAX_INST = MetricSpec(
    "ibmmq_channel_attribute_max_inst", "gauge", "The channel's MAXINST (definition; 999999999 by default).", CH, MQP)
CHANNEL_MAX_INSTC = MetricSpec(
    "ibmmq_channel_attribute_max_instc", "gauge", "The channel's MAXINSTC: instances per client address.", CH, MQP)
CHANNEL_SHARING = MetricSpec(
    "middleware_ibmmq_channel_sharing_conversations", "gauge", "Conversations sharing the channel instance "
    "(CURSHCNV, SVRCONN).", CH, "not in mq_prometheus")
CHANNEL_RETRIES = MetricSpec(
    "middleware_ibmmq_channel_retries_left", "gauge", "Retry attempts left (SHORTRTS, LONGRTS) of a sender-side "
    "channel, by kind (short, long).", (*CH, "kind"), "not in mq_prometheus; 0 on short: now on the long retries")
CHANNELS_EXCLUDED = MetricSpec(
    "middleware_ibmmq_channels_excluded", "gauge", "Channels (by name) left out by channels_include/exclude.",
    ("qmgr",))
# -- queue activity (DISPLAY QSTATUS ALL) --------------------------------------------------------------------------
QUEUE_TIME_SINCE_PUT = MetricSpec(
    "ibmmq_queue_time_since_put", "gauge", "Seconds since the last put (LPUTDATE/LPUTTIME in the queue manager's "
    "time zone; needs MONQ); absent when blank (mq_prometheus: 0).", Q, MQP)
QUEUE_TIME_SINCE_GET = MetricSpec(
    "ibmmq_queue_time_since_get", "gauge", "Seconds since the last get (LGETDATE/LGETTIME; needs MONQ); absent "
    "when blank.", Q, MQP + "; not drained: ibmmq_queue_depth > 0 and this > 600 (require monitoring_enabled)")
QUEUE_QTIME_SHORT = MetricSpec(
    "ibmmq_queue_qtime_short", "gauge", "Time messages stayed on the queue, short-term average (QTIME, "
    "microseconds; needs MONQ).", Q, MQP)
QUEUE_QTIME_LONG = MetricSpec(
    "ibmmq_queue_qtime_long", "gauge", "The same, long-term average (microseconds).", Q, MQP)
QUEUE_UNCOMMITTED = MetricSpec(
    "ibmmq_queue_uncommitted_messages", "gauge", "Uncommitted changes on the queue (UNCOM: a count where MQ gives "
    "one, else 1 for YES and 0 for NO).", Q, MQP + "; stuck unit of work: > 0 for 30m")
QUEUE_FILE_SIZE = MetricSpec(
    "ibmmq_queue_qfile_current_size", "gauge", "Size of the queue file (CURFSIZE, MB as MQ gives it; 9.1.5+).", Q,
    MQP + "; full: this / ibmmq_queue_qfile_max_size > 0.8")
QUEUE_FILE_MAX_SIZE = MetricSpec(
    "ibmmq_queue_qfile_max_size", "gauge", "Largest size the queue file may grow to now (CURMAXFS, MB).", Q, MQP)
QUEUE_USAGE = MetricSpec(
    "ibmmq_queue_attribute_usage", "gauge", "Queue usage (MQUS: 0 normal, 1 transmission queue).", Q,
    MQP + " (there also a `usage` label, here a join); transmission queues: and on(qmgr,queue) (this == 1)")
QUEUE_MONITORING = MetricSpec(
    "middleware_ibmmq_queue_monitoring_enabled", "gauge", "1 if queue monitoring is on for the queue (MONQ LOW, "
    "MEDIUM or HIGH), 0 if off: without it MSGAGE, QTIME and the last put/get are not kept.", Q,
    "not in mq_prometheus; alerts on the ages require == 1")
# -- the queue manager (DISPLAY QMSTATUS ALL, DISPLAY QMGR) ----------------------------------------------------------
QMGR_CONNECTIONS = MetricSpec(
    "ibmmq_qmgr_connection_count", "gauge", "Connections to the queue manager (CONNS).", ("qmgr",), MQP)
QMGR_CMDSERV = MetricSpec(
    "ibmmq_qmgr_command_server_status", "gauge", "Command server status (MQSVC_STATUS: 0 stopped, 1 starting, "
    "2 running, 3 stopping, 4 retrying).", ("qmgr",), MQP + "; down: != 2")
QMGR_CHINIT = MetricSpec(
    "ibmmq_qmgr_channel_initiator_status", "gauge", "Channel initiator status (MQSVC_STATUS, as above).",
    ("qmgr",), MQP + "; down: != 2")
QMGR_UPTIME = MetricSpec(
    "ibmmq_qmgr_uptime", "gauge", "Seconds since the queue manager started (STARTDA/STARTTI in its time zone).",
    ("qmgr",), MQP)
QMGR_START = MetricSpec(
    "middleware_ibmmq_qmgr_start_time_seconds", "gauge", "Unix time when the queue manager started.", ("qmgr",),
    "not in mq_prometheus (it has the uptime); changes() > 0: restarted")
QMGR_LOG_START = MetricSpec(
    "ibmmq_qmgr_log_start_epoch", "gauge", "Date of the oldest log record needed (LOGSTRDA/LOGSTRTI), Unix time in "
    "milliseconds as mq_prometheus gives it.", ("qmgr",), MQP)
QMGR_LOG_EXTENTS = [
    (field, MetricSpec(f"ibmmq_qmgr_log_extent_{kind}", "gauge", f"Number of the {text} log extent (the n of "
                       "Snnnnnnn.LOG; linear logging).", ("qmgr",), MQP))
    for field, kind, text in (("log_extent_current", "current", "current (CURRLOG)"),
                              ("log_extent_media", "media", "oldest for media recovery (MEDIALOG)"),
                              ("log_extent_restart", "restart", "oldest for restart recovery (RECLOG)"),
                              ("log_extent_archive", "archive", "newest not yet archived (ARCHLOG)"))]
QMGR_LOG_SIZES = [
    (field, MetricSpec(f"ibmmq_qmgr_log_size_{kind}", "gauge", f"{text}, bytes (MB x 2^20 as mq_prometheus).",
                       ("qmgr",), MQP))
    for field, kind, text in (("log_size_media_mb", "media", "Log needed for media recovery (MEDIASZ)"),
                              ("log_size_restart_mb", "restart", "Log needed for restart recovery (RECSZ)"),
                              ("log_size_archive_mb", "archive", "Log waiting to be archived (ARCHSZ)"),
                              ("log_size_reusable_mb", "reusable", "Log extents ready for reuse (REUSESZ)"))]
QMGR_PERCENTS = [
    (field, MetricSpec(name, "gauge", text, ("qmgr",), "not in mq_prometheus's status path" + note))
    for field, name, text, note in (
        ("log_in_use_percent", "middleware_ibmmq_qmgr_log_in_use_percent", "Primary log space in use (LOGINUSE, "
         "percent).", "; circular log nearly full: > 80"),
        ("log_utilization_percent", "middleware_ibmmq_qmgr_log_utilization_percent", "Primary log space the "
         "workload needs (LOGUTIL, percent; over 100: secondary extents in use).", ""),
        ("log_fs_in_use_percent", "middleware_ibmmq_qmgr_log_file_system_in_use_percent", "Use of the log's file "
         "system (LOGFSUSE, percent; absent when the log shares the queue manager's file system).", ""),
        ("qm_fs_in_use_percent", "middleware_ibmmq_qmgr_file_system_in_use_percent", "Use of the queue manager's "
         "file system (QMFSUSE, percent).", ""))]
QMGR_FS_SIZES = [
    (field, MetricSpec(name, "gauge", text, ("qmgr",), "not in mq_prometheus's status path"))
    for field, name, text in (
        ("log_fs_size_mb", "middleware_ibmmq_qmgr_log_file_system_size_bytes", "Size of the log's file system "
         "(LOGFSSZ, taken as MB)."),
        ("qm_fs_size_mb", "middleware_ibmmq_qmgr_file_system_size_bytes", "Size of the queue manager's file system "
         "(QMFSSZ, taken as MB)."))]
QMGR_MAX_HANDLES = MetricSpec(
    "middleware_ibmmq_qmgr_max_handles", "gauge", "Handles one connection may hold open (MAXHANDS): bounds the "
    "statistics subscriptions.", ("qmgr",), "not in mq_prometheus")
QMGR_INFO = MetricSpec(
    "middleware_ibmmq_qmgr_info", "info", "The queue manager's version, command level, QMID, platform and "
    "dead-letter queue (labels version, cmdlevel, qmid, platform, dlq; DISPLAY QMGR).", ("qmgr",),
    "not in mq_prometheus; DLQ depth: ibmmq_queue_depth * on(qmgr,queue) group_left label_replace(this, "
    "'queue', '$1', 'dlq', '(.+)') > 0")

SPECS = [QMGR_STATUS, QMGR_HA_ROLE, QUEUE_DEPTH, QUEUE_MAX_DEPTH, QUEUE_DEPTH_RATIO, QUEUE_OLDEST_MESSAGE_AGE,
         QUEUE_INPUT_HANDLES, QUEUE_OUTPUT_HANDLES, QMGR_PUTS, QMGR_GETS, QUEUE_PUTS, QUEUE_GETS, CHANNEL_STATUS,
         CHANNEL_STATUS_SQUASH, BACKEND_SUCCESS, BACKEND_DURATION, QUEUES, QUEUES_EXCLUDED, STATS_SUCCESS,
         STATS_DURATION, STATS_PUBLICATIONS, STATS_DROPPED, STATS_SUBSCRIPTIONS, STATS_NOT_SUBSCRIBED,
         STATS_HANDLES_CAP, FILE_SYSTEM_INFO, CHANNEL_SUBSTATE, CHANNEL_INDOUBT,
         *(spec for _, spec in CHANNEL_COUNTERS), CHANNEL_TIME_SINCE_MSG, CHANNEL_START_EPOCH,
         *(spec for _, spec in CHANNEL_PAIRS), CHANNEL_CUR_INST, CHANNEL_MAX_INST, CHANNEL_MAX_INSTC,
         CHANNEL_SHARING, CHANNEL_RETRIES, CHANNELS_EXCLUDED, QUEUE_TIME_SINCE_PUT, QUEUE_TIME_SINCE_GET,
         QUEUE_QTIME_SHORT, QUEUE_QTIME_LONG, QUEUE_UNCOMMITTED, QUEUE_FILE_SIZE, QUEUE_FILE_MAX_SIZE, QUEUE_USAGE,
         QUEUE_MONITORING, QMGR_CONNECTIONS, QMGR_CMDSERV, QMGR_CHINIT, QMGR_UPTIME, QMGR_START, QMGR_LOG_START,
         *(spec for _, spec in QMGR_LOG_EXTENTS), *(spec for _, spec in QMGR_LOG_SIZES),
         *(spec for _, spec in QMGR_PERCENTS), *(spec for _, spec in QMGR_FS_SIZES), QMGR_MAX_HANDLES, QMGR_INFO]


def disk_of(path: str, sysfs: str = "/sys") -> str:
    """The disk a directory lives on: its device through sysfs (/sys/dev/block/MAJ:MIN), the parent disk of a
    partition; ``MAJ:MIN`` when no block device backs it (NFS, tmpfs). Raises OSError when the path is absent."""
    import os

    dev = os.stat(path).st_dev
    number = f"{os.major(dev)}:{os.minor(dev)}"
    link = os.path.join(sysfs, "dev", "block", number)
    if not os.path.exists(link):
        return number
    real = os.path.realpath(link)
    if os.path.exists(os.path.join(real, "partition")):
        real = os.path.dirname(real)
    return os.path.basename(real)


def _patterns(patterns: list[str]) -> re.Pattern[str]:
    return re.compile("|".join(fnmatch.translate(p) for p in patterns) or r"(?!)")


class Selection:
    """Names to report: ``include`` globs, where a ``!`` in front excludes (mq_prometheus's monitoredQueues: only
    ``!`` entries means everything but those), and ``exclude`` globs; an exclusion always wins."""

    def __init__(self, include: list[str], exclude: list[str]) -> None:
        positive = [p for p in include if not p.startswith("!")]
        negative = [p[1:] for p in include if p.startswith("!")] + list(exclude)
        # only "!" entries: everything but those (an empty include list still reports nothing)
        self.include = _patterns(positive if positive or not include else ["*"])
        self.exclude = _patterns(negative)

    def __call__(self, name: str) -> bool:
        return bool(self.include.match(name)) and not self.exclude.match(name)


def make_backend(entry: QueueManagerEntry) -> Backend:
    """The back-end object for one queue manager (imported lazily: REST needs no MQ client)."""
    try:
        password = entry.read_password()
    except SecretUnavailable as exc:
        raise BackendError(str(exc)) from None
    if entry.backend == "rest":
        from .rest import RestBackend

        return RestBackend(entry.name, entry.url or "", username=entry.username, password=password,
                           client_cert=entry.client_cert, client_key=entry.client_key, ca_file=entry.ca_file,
                           verify_tls=entry.verify_tls, timeout=entry.timeout, api_version=entry.api_version)
    if entry.backend == "pcf":
        from .pcf import PcfBackend, tls_settings

        try:  # checked at start; again here for the file:// form and files removed since
            tls = tls_settings(entry.ccdt, entry.key_repository, entry.cipher_spec, entry.certificate_label,
                               entry.channel, entry.conn_name)
        except ValueError as exc:
            raise BackendError(str(exc)) from None
        return PcfBackend(entry.name, entry.channel or "", entry.conn_name or "", user=entry.username,
                          password=password, timeout=entry.timeout, statistics=entry.statistics,
                          statistics_max_queues=entry.statistics_max_queues, monitor_interval=entry.monitor_interval,
                          tls=tls)
    from .runmqsc import RunmqscBackend

    return RunmqscBackend(entry.name, runmqsc=entry.runmqsc, dspmq=entry.dspmq, timeout=entry.timeout,
                          command_prefix=entry.command_prefix,
                          amqsrua=entry.amqsrua if entry.statistics == "publications" else None,
                          monitor_interval=entry.monitor_interval,
                          statistics_max_queues=entry.statistics_max_queues)


class ChannelCounters:
    """mq_prometheus's channel counters: what the channels counted since the exporter started.

    MQ's MSGS, BYTSSENT, ... count from the start of each channel instance.  Per instance the exporter keeps the
    last raw value and adds the difference to its series' total; a fall (the instance restarted) adds the new raw
    value; an instance seen on the queue manager's first read adds 0 (its counts predate the exporter), one that
    appears later adds its whole count (it started since).  Instances and totals of series gone from a read are
    forgotten (bounded memory; a series that returns starts again from 0, which rate() takes as a reset), except
    after a ``partial`` read (a channel-status answer that could not be read whole): what it lacks is kept, so a
    channel that was only unreadable goes on counting from where it was."""

    def __init__(self) -> None:
        self.raw: dict[tuple, list[int | None]] = {}
        self.totals: dict[tuple, list[float]] = {}
        self.primed = False

    def update(self, series: dict[tuple, list[ChannelState]], partial: bool = False) -> dict[tuple, list[float | None]]:
        raw: dict[tuple, list[int | None]] = {}
        owner: dict[tuple, tuple] = {}
        for key, instances in series.items():
            for ch in instances:
                ident = (key, ch.job_name, ch.started)
                values = [getattr(ch, name) for name in CHANNEL_COUNTER_FIELDS]
                if ident in raw:  # two records alike in every way: their counts add up
                    values = [None if a is None and b is None else (a or 0) + (b or 0)
                              for a, b in zip(raw[ident], values, strict=True)]
                raw[ident] = values
                owner[ident] = key
        totals = {key: self.totals.get(key, [0.0] * len(CHANNEL_COUNTER_FIELDS)) for key in series}
        seen: dict[tuple, list[bool]] = {key: [False] * len(CHANNEL_COUNTER_FIELDS) for key in series}
        for ident, values in raw.items():
            key = owner[ident]
            before = self.raw.get(ident)
            for i, value in enumerate(values):
                if value is None:
                    continue
                seen[key][i] = True
                last = before[i] if before is not None else None
                if last is not None:
                    totals[key][i] += value - last if value >= last else value
                elif self.primed and before is None:
                    totals[key][i] += value
        result = {key: [total if seen[key][i] else None for i, total in enumerate(totals[key])] for key in series}
        if partial:
            raw = {**{i: v for i, v in self.raw.items() if i not in raw}, **raw}
            totals = {**{k: v for k, v in self.totals.items() if k not in totals}, **totals}
        self.raw, self.totals, self.primed = raw, totals, True
        return result


class _QueueManager(Target):
    """One queue manager: its settings, its back-end (made on first read) and its queue filter."""

    def __init__(self, entry: QueueManagerEntry, collector_timeout: float, interval: float = 30.0) -> None:
        # dspmq + runmqsc, or a handful of REST calls, each bounded by the entry's timeout
        super().__init__("ibmmq", entry.name, entry.timeout * 4, collector_timeout)
        self.entry = entry
        self.queues = Selection(entry.include, entry.exclude)
        self.channels = Selection(entry.channels_include, entry.channels_exclude)
        self.backend: Backend | None = None
        self.interval = interval
        self.zone = None
        if entry.time_zone:
            from zoneinfo import ZoneInfo

            self.zone = ZoneInfo(entry.time_zone)
        self.counters = ChannelCounters()
        # the last definitions read: a failed DISPLAY CHANNEL keeps the inactive channels (reported as failed)
        self.definitions: list[ChannelDefinition] | None = None

    def wanted(self, queue: str) -> bool:
        return self.queues(queue)

    def epoch(self, when: datetime) -> float:
        """Unix time of a date and time the queue manager printed (its local time, ``time_zone``)."""
        if when.tzinfo is None:
            # a naive datetime's timestamp() is the exporter's local time: right when no time_zone is set
            when = when.replace(tzinfo=self.zone) if self.zone is not None else when
        return when.timestamp()

    def read(self) -> QmgrSnapshot:
        if self.backend is None:
            self.backend = make_backend(self.entry)
            self.backend.wanted = self.wanted  # type: ignore[method-assign] - the statistics follow the filter
            stats = getattr(self.backend, "stats", None)
            if hasattr(stats, "ticks"):  # amqsrua: about one collection's worth of publications per command
                stats.ticks = max(1, round(self.interval / self.entry.monitor_interval))  # type: ignore[union-attr]
        snapshot = self.backend.snapshot()
        if not isinstance(snapshot, QmgrSnapshot):
            raise BackendError(f"back-end returned {type(snapshot).__name__}, not a snapshot")
        stats = getattr(self.backend, "stats", None)
        if snapshot.health is not None and snapshot.health.max_handles and hasattr(stats, "max_handles"):
            stats.max_handles = snapshot.health.max_handles  # type: ignore[union-attr] - caps the next run's subs
        return snapshot

    def error(self) -> str | None:
        """The last read's error as ``<backend>: <error>``, or None."""
        exc = self.outcome.error
        if exc is None:
            return None
        if isinstance(exc, BackendError) or self.outcome.overdue:
            return f"{self.entry.backend}: {exc}"
        return f"{self.entry.backend}: {type(exc).__name__}: {exc}"  # a back-end bug


class IbmmqCollector(Collector):
    name = NAME
    description = DESCRIPTION
    Settings = IbmmqSettings
    clock = staticmethod(time.time)  # "now" for the ages of the queue manager's timestamps (tests set their own)

    def __init__(self, settings: IbmmqSettings, context: Context) -> None:
        super().__init__(settings, context)
        self.settings: IbmmqSettings = settings
        self.qmgrs = [_QueueManager(entry, settings.timeout, settings.interval) for entry in settings.queue_managers]

    def collect_in_background(self) -> bool:
        """Statistics publications pile up on the subscription's queue between reads: they are drained on every
        interval even while nobody scrapes (core/scheduler.py runs the other collectors only when read)."""
        return any(entry.statistics == "publications" for entry in self.settings.queue_managers)

    @classmethod
    def reference_settings(cls) -> IbmmqSettings:
        return IbmmqSettings()

    target_label = "qmgr"

    def static_labels(self) -> list[ConfiguredLabels]:
        return [ConfiguredLabels(entry.name, f"collectors.ibmmq.queue_managers.{index}.labels", entry.labels)
                for index, entry in enumerate(self.settings.queue_managers)]

    def specs(self) -> list[MetricSpec]:
        return SPECS

    def targets(self) -> list[str]:
        return [qm.entry.name for qm in self.qmgrs]

    def collect(self, batch: MetricBatch) -> None:
        fan_out(self.qmgrs, _QueueManager.read)
        for qm in self.qmgrs:
            try:
                self._emit(qm, batch)
            finally:
                # the snapshot (10,000 queues: ~7 MB of status objects) is not kept until the next run
                qm.outcome.value = None
            self._emit_disks(qm.entry, batch)

    def _emit_disks(self, entry: QueueManagerEntry, batch: MetricBatch) -> None:
        """MQ-IO: the disks of the queue files and the log (only when both paths are set)."""
        if not (entry.data_path and entry.log_path):
            return
        for use, path in (("data", entry.data_path), ("log", entry.log_path)):
            try:
                FILE_SYSTEM_INFO.add_info(batch, {"device": disk_of(path, self.context.sysfs)}, qmgr=entry.name,
                                          use=use)
            except OSError as exc:
                batch.note_error(f"{entry.name}/{use}_path", f"{use}_path: {exc.strerror or exc}")
                batch.report_source(entry.name, f"{use}_path", False, f"{use}_path: {exc.strerror or exc}")

    def _emit(self, qm: _QueueManager, batch: MetricBatch) -> None:
        name, backend = qm.entry.name, qm.entry.backend
        snap: QmgrSnapshot | None = qm.outcome.value
        BACKEND_SUCCESS.add(batch, 1 if snap else 0, qmgr=name, backend=backend)
        BACKEND_DURATION.add(batch, qm.outcome.duration, qmgr=name, backend=backend)
        error = qm.error()
        if error:
            batch.note_error(name, error)
        # the queue manager is the target, up when its back-end answered (core/targets.py)
        batch.report_target(name, snap is not None, error)
        batch.report_source(name, f"backend:{backend}", snap is not None, error)
        state = qmgr_state(snap.status if snap is not None else None)  # no snapshot: UNKNOWN (0, unknown)
        QMGR_STATUS.add(batch, state.status, qmgr=name)
        for role in ROLES:
            QMGR_HA_ROLE.add(batch, 1 if role == state.role else 0, qmgr=name, role=role)
        if snap is None:
            return
        now = self.clock()
        reported = excluded = 0
        seen: set[str] = set()
        for queue in snap.queues:
            if queue.name in seen:
                continue
            seen.add(queue.name)
            if not qm.wanted(queue.name):
                excluded += 1
                continue
            reported += 1
            labels = {"qmgr": name, "queue": queue.name}
            if queue.depth is not None:
                QUEUE_DEPTH.add(batch, queue.depth, **labels)
            if queue.max_depth is not None:
                QUEUE_MAX_DEPTH.add(batch, queue.max_depth, **labels)
                if queue.depth is not None and queue.max_depth > 0:
                    QUEUE_DEPTH_RATIO.add(batch, queue.depth / queue.max_depth, **labels)
            if queue.oldest_message_age is not None:
                QUEUE_OLDEST_MESSAGE_AGE.add(batch, queue.oldest_message_age, **labels)
            if queue.open_input is not None:
                QUEUE_INPUT_HANDLES.add(batch, queue.open_input, **labels)
            if queue.open_output is not None:
                QUEUE_OUTPUT_HANDLES.add(batch, queue.open_output, **labels)
            self._emit_queue_activity(qm, queue, labels, now, batch)
        QUEUES.add(batch, reported, qmgr=name)
        QUEUES_EXCLUDED.add(batch, excluded, qmgr=name)
        if snap.throughput is not None:
            self._emit_throughput(qm, snap.throughput, seen, batch)
        self._emit_channels(qm, snap, now, batch)
        if snap.health is not None:
            self._emit_health(qm, snap.health, now, batch)
        for source, error in sorted(snap.source_errors.items()):
            # an optional source (DISPLAY CHANNEL, QMSTATUS, QMGR) failed: its figures are absent, the rest stands
            batch.report_source(name, source, False, f"{backend}: {error}")
        if snap.channel_definitions is not None and "channel" not in snap.source_errors:
            batch.report_source(name, "channel", True)
        if state.running and "chstatus" not in snap.source_errors:
            batch.report_source(name, "chstatus", True)
        if snap.health is not None:
            for source in ("qmstatus", "qmgr"):
                if source not in snap.source_errors:
                    batch.report_source(name, source, True)

    def _ago(self, qm: _QueueManager, when: datetime, now: float) -> float:
        """Seconds since a queue-manager timestamp; one in the future (clocks or time zone off) counts as 0."""
        return max(0.0, now - qm.epoch(when))

    def _emit_queue_activity(self, qm: _QueueManager, queue: QueueStatus, labels: dict[str, str], now: float,
                             batch: MetricBatch) -> None:
        if queue.last_put is not None:
            QUEUE_TIME_SINCE_PUT.add(batch, self._ago(qm, queue.last_put, now), **labels)
        if queue.last_get is not None:
            QUEUE_TIME_SINCE_GET.add(batch, self._ago(qm, queue.last_get, now), **labels)
        for spec, value in ((QUEUE_QTIME_SHORT, queue.qtime_short), (QUEUE_QTIME_LONG, queue.qtime_long),
                            (QUEUE_UNCOMMITTED, queue.uncommitted), (QUEUE_FILE_SIZE, queue.file_size_mb),
                            (QUEUE_FILE_MAX_SIZE, queue.file_max_size_mb)):
            if value is not None:
                spec.add(batch, value, **labels)
        usage = {"NORMAL": 0, "XMITQ": 1}.get(queue.usage.upper())
        if usage is not None:
            QUEUE_USAGE.add(batch, usage, **labels)
        monitoring = queue.monitoring.upper()
        if monitoring in ("OFF", "LOW", "MEDIUM", "HIGH"):  # QMGR (the queue manager's level) or "": unknown
            QUEUE_MONITORING.add(batch, 0 if monitoring == "OFF" else 1, **labels)

    def _emit_channels(self, qm: _QueueManager, snap: QmgrSnapshot, now: float, batch: MetricBatch) -> None:
        name = qm.entry.name
        if snap.channel_definitions is not None:
            qm.definitions = snap.channel_definitions
        definitions = {d.name: d for d in qm.definitions or ()}
        excluded: set[str] = set()
        series: dict[tuple[str, str, str, str, str], list[ChannelState]] = {}
        for channel in snap.channels:
            if not qm.channels(channel.name):
                excluded.add(channel.name)
                continue
            ctype = channel_type_word(channel.type) if channel.type else ""
            if not ctype and channel.name in definitions:
                ctype = definitions[channel.name].type
            jobname = channel.job_name if qm.entry.channel_jobname_label else ""
            key = (channel.name, ctype, channel.connection, channel.remote_qmgr, jobname)
            series.setdefault(key, []).append(channel)
        instances = Counter(key[0] for key, records in series.items() for _ in records)
        # a channel-status answer that could not be read (wholly or in part; the source is reported failed): the
        # channels it lacks are not shown as stopped, neither as inactive definitions nor by a counter reset
        unread = "chstatus" in snap.source_errors
        totals = qm.counters.update(series, partial=unread)
        for key in sorted(series):
            # several instances with the same labels: the gauges are the most alive one's, the counters add up
            best = max(series[key], key=lambda c: channel_status_squash(c.status))
            labels = dict(zip(CH, (name, *key), strict=True))
            status = best.status.upper()
            code = CHANNEL_STATUS_CODES.get(status)
            if code is not None:
                CHANNEL_STATUS.add(batch, code, **labels)
            CHANNEL_STATUS_SQUASH.add(batch, channel_status_squash(status), **labels)
            substate = CHANNEL_SUBSTATE_CODES.get(best.substate.upper()) if best.substate else None
            if substate is not None:
                CHANNEL_SUBSTATE.add(batch, substate, **labels)
            if best.indoubt is not None:
                CHANNEL_INDOUBT.add(batch, 1 if best.indoubt else 0, **labels)
            for (_, spec), total in zip(CHANNEL_COUNTERS, totals[key], strict=True):
                if total is not None:
                    spec.add(batch, total, **labels)
            if best.last_message is not None:
                CHANNEL_TIME_SINCE_MSG.add(batch, self._ago(qm, best.last_message, now), **labels)
            if best.started is not None:
                CHANNEL_START_EPOCH.add(batch, round(qm.epoch(best.started) * 1000), **labels)
            for field, spec in CHANNEL_PAIRS:
                value = getattr(best, field)
                if value is not None:
                    spec.add(batch, value, **labels)
            CHANNEL_CUR_INST.add(batch, instances[key[0]], **labels)
            self._emit_definition(definitions.get(key[0]), labels, batch)
            if best.sharing_conversations is not None:
                CHANNEL_SHARING.add(batch, best.sharing_conversations, **labels)
            for kind, value in (("short", best.short_retries_left), ("long", best.long_retries_left)):
                if value is not None:
                    CHANNEL_RETRIES.add(batch, value, kind=kind, **labels)
        if qm.entry.show_inactive_channels and not unread:
            for definition in sorted(definitions.values(), key=lambda d: d.name):
                if definition.name in instances or definition.type == "CLNTCONN":
                    continue  # running, or a client-side definition (never has status on the queue manager)
                if not qm.channels(definition.name):
                    excluded.add(definition.name)
                    continue
                labels = dict(zip(CH, (name, definition.name, definition.type, "", "", ""), strict=True))
                CHANNEL_STATUS.add(batch, CHANNEL_STATUS_CODES["INACTIVE"], **labels)
                CHANNEL_STATUS_SQUASH.add(batch, 0, **labels)
                CHANNEL_CUR_INST.add(batch, 0, **labels)
                self._emit_definition(definition, labels, batch)
        CHANNELS_EXCLUDED.add(batch, len(excluded), qmgr=name)

    @staticmethod
    def _emit_definition(definition: ChannelDefinition | None, labels: dict[str, str], batch: MetricBatch) -> None:
        if definition is None:
            return
        if definition.max_instances is not None:
            CHANNEL_MAX_INST.add(batch, definition.max_instances, **labels)
        if definition.max_instances_per_client is not None:
            CHANNEL_MAX_INSTC.add(batch, definition.max_instances_per_client, **labels)

    def _emit_health(self, qm: _QueueManager, health: QmgrHealth, now: float, batch: MetricBatch) -> None:
        name = qm.entry.name
        if health.connections is not None:
            QMGR_CONNECTIONS.add(batch, health.connections, qmgr=name)
        for spec, word in ((QMGR_CMDSERV, health.command_server), (QMGR_CHINIT, health.channel_initiator)):
            code = SERVICE_STATUS_CODES.get(word.upper()) if word else None
            if code is not None:
                spec.add(batch, code, qmgr=name)
        if health.started is not None:
            QMGR_UPTIME.add(batch, self._ago(qm, health.started, now), qmgr=name)
            QMGR_START.add(batch, qm.epoch(health.started), qmgr=name)
        if health.log_started is not None:
            QMGR_LOG_START.add(batch, round(qm.epoch(health.log_started) * 1000), qmgr=name)
        for field, spec in QMGR_LOG_EXTENTS + QMGR_PERCENTS:
            value = getattr(health, field)
            if value is not None:
                spec.add(batch, value, qmgr=name)
        for field, spec in QMGR_LOG_SIZES + QMGR_FS_SIZES:
            value = getattr(health, field)
            if value is not None:
                spec.add(batch, value * 1048576, qmgr=name)
        if health.max_handles is not None:
            QMGR_MAX_HANDLES.add(batch, health.max_handles, qmgr=name)
        info = {"version": health.version, "cmdlevel": health.command_level, "qmid": health.qmid,
                "platform": health.platform, "dlq": health.dead_letter_queue}
        if any(info.values()):
            QMGR_INFO.add_info(batch, info, qmgr=name)

    def _emit_throughput(self, qm: _QueueManager, tp: Throughput, queues: set[str], batch: MetricBatch) -> None:
        """The statistics source's own success and, when it succeeded, its counters (a failed source adds none:
        a half-read batch of publications must not look like a fall in throughput)."""
        name = qm.entry.name
        labels = {"qmgr": name, "source": tp.source}
        STATS_SUCCESS.add(batch, 0 if tp.error else 1, **labels)
        STATS_DURATION.add(batch, tp.duration, **labels)
        STATS_PUBLICATIONS.add(batch, tp.publications, **labels)
        STATS_DROPPED.add(batch, tp.dropped, **labels)
        STATS_SUBSCRIPTIONS.add(batch, tp.subscriptions, **labels)
        STATS_NOT_SUBSCRIBED.add(batch, tp.not_subscribed, **labels)
        if tp.handles_cap is not None:
            STATS_HANDLES_CAP.add(batch, tp.handles_cap, **labels)
        batch.report_source(name, f"statistics:{tp.source}", not tp.error, f"{tp.source}: {tp.error}")
        if tp.error:
            batch.note_error(f"{name}/statistics", f"{tp.source}: {tp.error}")
            return
        if tp.qmgr_puts is not None:
            QMGR_PUTS.add(batch, tp.qmgr_puts, qmgr=name)
        if tp.qmgr_gets is not None:
            QMGR_GETS.add(batch, tp.qmgr_gets, qmgr=name)
        for queue, value in sorted(tp.queue_puts.items()):
            if queue in queues and qm.wanted(queue):
                QUEUE_PUTS.add(batch, value, qmgr=name, queue=queue)
        for queue, value in sorted(tp.queue_gets.items()):
            if queue in queues and qm.wanted(queue):
                QUEUE_GETS.add(batch, value, qmgr=name, queue=queue)

    def close(self) -> None:
        for qm in self.qmgrs:
            if qm.backend is not None:
                try:
                    qm.backend.close()
                except Exception:  # noqa: BLE001 - closing must not stop the other queue managers
                    pass
