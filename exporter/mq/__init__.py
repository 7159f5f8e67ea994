"""IBM MQ back-ends: mqweb REST, PCF through the `ibmmq` package, and runmqsc text.  Each turns one queue
manager into the same :class:`~exporter.mq.model.QmgrSnapshot`, which the `ibmmq` collector exposes."""
