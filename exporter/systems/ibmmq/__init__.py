"""IBM MQ queue managers through mqweb REST, PCF or runmqsc: depths, statuses, channels."""

# the registry names the collector from these without importing its settings or code (docs/footprint.md)
NAME = "ibmmq"
DESCRIPTION = ("IBM MQ queue managers (REST, PCF or runmqsc): queue depths, qmgr and channel status, put/get counts "
               "from the resource-statistics publications (PCF, amqsrua).")
