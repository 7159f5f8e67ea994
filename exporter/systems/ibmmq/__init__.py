"""IBM MQ queue managers through mqweb REST, PCF or runmqsc: depths, statuses, channels."""
