"""The HTTP side: the app and its routes (``server``), serving the scrape and the pages, the web configuration
file (TLS, basic auth: ``webconfig``), the request gate in front of every route (``gate``), connection limits
(``limits``), the uvicorn server class and the internals of uvicorn it overrides, checked by a test
(``serving``), the status page (``statuspage``) and the health-check probe the container runs (``healthcheck``).
It sits over ``exporter.core``; nothing below imports it."""
