"""The IBM MQ collector's metric declarations: names, types, help texts and labels (those of IBM's mq_prometheus
where it has the figure; the last column of docs/metrics.md says which).  The collector (collector.py) fills them."""

from __future__ import annotations

from ...core.metrics import MetricSpec
from .model import (
    CHANNEL_INSTANCE_TYPE_CODES,
    CHANNEL_SECURITY_PROTOCOL_CODES,
    CHANNEL_STATUS_CODES,
    CHANNEL_SUBSTATE_CODES,
    CHANNEL_TYPE_CODES,
    DISPLAY_MAX,
    NHA_ROLE_CODES,
    NHA_STATUS_CODES,
    SERVICE_STATUS_CODES,
    code_words,
)

Q = ("qmgr", "queue")
# mq_prometheus's channel labels we have (its platform, description and sslciph are left out: description and
# sslciph change the series when edited; jobname stays empty unless channel_jobname_label is set)
CH = ("qmgr", "channel", "type", "connname", "rqmname", "jobname")
BK = ("qmgr", "backend")
MQP = "mq_prometheus: same name"  # where a name comes from (docs/metrics.md); ours are middleware_ibmmq_*
MQPC = "mq_prometheus: "  # + its name, for counters (its Go client writes them without _total)
# said of every figure MQ shows at most as 999999999 (model.DISPLAY_MAX): the capped value is kept
AT_LEAST = f"; {DISPLAY_MAX} (the largest value MQ shows) means at least that much"

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
    f"monitoring, MONQ; absent where it is off, where mq_prometheus reports 0{AT_LEAST}).", Q, MQP)
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
    "ibmmq_channel_status", "gauge", f"Channel status (MQCHS: {code_words(CHANNEL_STATUS_CODES)}); 0 also for a "
    "defined channel without status (show_inactive_channels) while the queue manager runs; no channel series at "
    "all while it does not (ended, standby: unknown, not inactive).", CH, MQP)
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
    "ibmmq_channel_substate", "gauge", "What the channel's MCA is doing (MQCHSSTATE, by runmqsc's SUBSTATE word: "
    f"{code_words(CHANNEL_SUBSTATE_CODES)}); absent for a blank SUBSTATE( ).", CH, MQP)
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
         "short-term average (XQTIME, microseconds; needs channel monitoring: absent while the status says "
         f"MONCHL(OFF), whose zeros were never measured{AT_LEAST})."),
        ("xmitq_time_long", "ibmmq_channel_xmitq_time_long", "The same, long-term average (microseconds)."),
        ("network_time_short", "ibmmq_channel_nettime_short", "Network time of a batch confirmation, short-term "
         f"average (NETTIME, microseconds; absent with MONCHL(OFF){AT_LEAST})."),
        ("network_time_long", "ibmmq_channel_nettime_long", "The same, long-term average (microseconds)."),
        ("batch_size_short", "ibmmq_channel_batchsz_short", "Messages per batch, short-term average (XBATCHSZ; "
         "absent with MONCHL(OFF))."),
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
    f"microseconds; needs MONQ: absent when blank{AT_LEAST}, about 16.7 minutes).", Q,
    MQP + "; kept at 999999999 as mq_prometheus keeps it")
QUEUE_QTIME_LONG = MetricSpec(
    "ibmmq_queue_qtime_long", "gauge", f"The same, long-term average (microseconds{AT_LEAST}).", Q, MQP)
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
    "ibmmq_qmgr_command_server_status", "gauge", f"Command server status (MQSVC_STATUS: "
    f"{code_words(SERVICE_STATUS_CODES)}).", ("qmgr",), MQP + "; down: != 2")
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

# -- issue 39 (items 3 and 7): mq_prometheus's channel codes, and whether channel monitoring measured anything ------
CHANNEL_TYPE = MetricSpec(
    "ibmmq_channel_type", "gauge", f"Channel type as mq_prometheus exports it (MQCHT: "
    f"{code_words(CHANNEL_TYPE_CODES)}); the same word is the type label.", CH, MQP)
CHANNEL_INSTANCE_TYPE = MetricSpec(
    "ibmmq_channel_instance_type", "gauge", f"Instance type of the channel status (MQOT: "
    f"{code_words(CHANNEL_INSTANCE_TYPE_CODES)}; the CURRENT, SAVED or SHORT keyword of DISPLAY CHSTATUS); absent "
    "where the answer does not say (a defined channel without status).", CH, MQP)
CHANNEL_SECURITY_PROTOCOL = MetricSpec(
    "ibmmq_channel_security_protocol", "gauge", f"Security protocol the channel instance negotiated (SECPROT, "
    f"MQSECPROT: {code_words(CHANNEL_SECURITY_PROTOCOL_CODES)}); absent where not shown (before MQ 8, or inactive).",
    CH, MQP + '; TLS below 1.2: < 4 and != 0')
CHANNEL_MONITORING = MetricSpec(
    "middleware_ibmmq_channel_monitoring_enabled", "gauge", "1 if channel monitoring is on for the channel instance "
    "(MONCHL LOW, MEDIUM or HIGH), 0 if off: without it XQTIME, NETTIME, XBATCHSZ and XQMSGSA are not measured and "
    "their series are absent.", CH, "not in mq_prometheus")
CHANNEL_CODES_SPECS = [CHANNEL_TYPE, CHANNEL_INSTANCE_TYPE, CHANNEL_SECURITY_PROTOCOL, CHANNEL_MONITORING]

# -- the recovery log from the DISK/Log resource publications (amqsrua; issue 39) ------------------------------------
# mq_prometheus's names (mqmetric's mHeur table, ibmmq_qmgr_ prefix) and units (its Normalise: microseconds to
# seconds, MB to bytes; percentages as percent).  Left out: "Log file system - free space", which mq_prometheus
# exports as ibmmq_qmgr_log_file_system_free_space_bytes although it is a percentage (in_use_bytes / max_bytes say
# the same), and its opt-in "extended" slowest-write elements.
QMGR_LOG_PUBLISHED = [
    (description, MetricSpec(name, kind, text + " (DISK/Log publication, read with amqsrua; runmqsc back-end).",
                             ("qmgr",), (MQPC + name.removesuffix("_total") if kind == "counter" else MQP) + note))
    for description, name, kind, text, note in (
        ("Log - bytes in use", "ibmmq_qmgr_log_in_use_bytes", "gauge", "Bytes of the active log in use", ""),
        ("Log - bytes max", "ibmmq_qmgr_log_max_bytes", "gauge", "Bytes the active log may use (primary and "
         "secondary extents; with circular logging in_use == max is normal: the extents are preallocated)", ""),
        ("Log file system - bytes in use", "ibmmq_qmgr_log_file_system_in_use_bytes", "gauge",
         "Bytes in use on the log's file system", ""),
        ("Log file system - bytes max", "ibmmq_qmgr_log_file_system_max_bytes", "gauge", "Size of the log's file "
         "system in bytes", "; nearly full: in_use / max"),
        ("Log - physical bytes written", "ibmmq_qmgr_log_physical_written_bytes_total", "counter", "Bytes written "
         "to the recovery log (whole pages), summed since the exporter started reading them", "; rate()"),
        ("Log - logical bytes written", "ibmmq_qmgr_log_logical_written_bytes_total", "counter", "Bytes of log "
         "records written, summed since the exporter started reading them", "; rate()"),
        ("Log - write latency", "ibmmq_qmgr_log_write_latency_seconds", "gauge", "Latency of synchronous writes "
         "to the recovery log, seconds (amqsrua prints uSec)", "; MQ-IO: slow log disk"),
        ("Log - write size", "ibmmq_qmgr_log_write_size_bytes", "gauge", "Average size of a log write, bytes", ""),
        ("Log - current primary space in use", "ibmmq_qmgr_log_current_primary_space_in_use_percentage", "gauge",
         "Primary log space in use, percent (over 100: secondary extents in use; LOGINUSE of QMSTATUS)", ""),
        ("Log - workload primary space utilization", "ibmmq_qmgr_log_workload_primary_space_utilization_percentage",
         "gauge", "Primary log space the workload needs, percent (LOGUTIL of QMSTATUS)", ""),
        ("Log - bytes required for media recovery", "ibmmq_qmgr_log_required_for_media_recovery_bytes", "gauge",
         "Log bytes needed for media recovery (linear logging)", ""),
        ("Log - bytes occupied by reusable extents", "ibmmq_qmgr_log_occupied_by_reusable_extents_bytes", "gauge",
         "Log bytes in extents ready for reuse (linear logging)", ""),
        ("Log - bytes occupied by extents waiting to be archived",
         "ibmmq_qmgr_log_occupied_by_extents_waiting_to_be_archived_bytes", "gauge", "Log bytes in extents waiting "
         "to be archived (linear logging)", "; growing: archiving is not keeping up"))]

# -- Native HA (DISPLAY QMSTATUS TYPE(NATIVEHA); issue 39) --------------------------------------------------------
# mq_prometheus reads Native HA only from the NHAREPLICA publications (ibmmq_nha_*, label nha = instance name); the
# status below is not among its metrics, so the names are ours, with its `nha` label.
NHA = ("qmgr", "nha")
NHA_ROLE = MetricSpec(
    "middleware_ibmmq_nha_role", "gauge", f"Role of the Native HA instance as the active instance sees it (ROLE; "
    f"MQNHAROLE: {code_words(NHA_ROLE_CODES)}).", NHA, "not in mq_prometheus")
NHA_IN_SYNC = MetricSpec(
    "middleware_ibmmq_nha_in_sync", "gauge", "1 if the Native HA replica is in sync with the active instance "
    "(INSYNC(YES)), 0 if not: it could not take over without losing data.", NHA,
    "not in mq_prometheus; replica out of sync: == 0")
NHA_BACKLOG = MetricSpec(
    "middleware_ibmmq_nha_backlog_bytes", "gauge", "Recovery log the active instance has written and this replica "
    "has not yet acknowledged (BACKLOG, KB x 1024).", NHA,
    "not in mq_prometheus's status path (its ibmmq_nha_backlog_bytes comes from the NHAREPLICA publications)")
NHA_CONNECTED = MetricSpec(
    "middleware_ibmmq_nha_connected", "gauge", "1 if the replica has its pair of active connections to the active "
    "instance (CONNACTV(YES)), 0 if not.", NHA, "not in mq_prometheus")
NHA_STATUS = MetricSpec(
    "middleware_ibmmq_nha_status", "gauge", f"Replication status of the instance (HASTATUS; MQNHASTATUS: "
    f"{code_words(NHA_STATUS_CODES)}).", NHA, "not in mq_prometheus")
NHA_SPECS = [NHA_ROLE, NHA_IN_SYNC, NHA_BACKLOG, NHA_CONNECTED, NHA_STATUS]

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
         *(spec for _, spec in QMGR_PERCENTS), *(spec for _, spec in QMGR_FS_SIZES), QMGR_MAX_HANDLES, QMGR_INFO,
         *CHANNEL_CODES_SPECS]
SPECS += [*(spec for _, spec in QMGR_LOG_PUBLISHED), *NHA_SPECS]  # issue 39
