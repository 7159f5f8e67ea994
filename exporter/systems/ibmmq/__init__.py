"""IBM MQ queue managers, each read through one back-end of its own choosing: mqweb's administrative REST API,
PCF over a client connection (the optional ``ibmmq`` package), or ``dspmq`` and ``runmqsc`` on the queue manager's
host; queue depths, queue-manager and channel status and health, and put/get counts from the queue manager's
resource-statistics publications, under IBM mq_prometheus's names.

In this folder: ``settings.py`` (the queue managers to read, validated without importing the rest),
``metrics.py`` (the metric declarations), ``collector.py`` (the collector: one target per queue manager, read at
once, and the emitters), ``model.py`` (what every back-end returns, and the MQ status codes and their words, which
``dashboards/build.py`` reads too), ``states.py`` (queue-manager states in every back-end's spelling), the
back-ends ``rest.py``, ``pcf.py`` and ``runmqsc.py``, the readers they share (``parse.py``: runmqsc and dspmq text,
mqweb's JSON and amqsrua's text; ``mqscmap.py``: MQSC keywords to the model), and the put/get counts
(``statistics.py``: the three sources; ``resstats.py``: the resource-statistics publications' PCF decoder).
What it reads, the permissions and the guide rows: README.md.
"""

# the registry names the collector from these without importing its settings or code (docs/footprint.md)
NAME = "ibmmq"
DESCRIPTION = ("IBM MQ queue managers (REST, PCF or runmqsc): queue depths, qmgr and channel status, put/get counts "
               "from the resource-statistics publications (PCF, amqsrua).")
