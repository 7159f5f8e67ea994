# syntax=docker/dockerfile:1
#
# middleware-exporter container image.
#
# Build:
#   docker build -t middleware-exporter .
#   docker build --build-arg WITH_MQ=true -t middleware-exporter:mq .    # + the ibmmq PCF back-end
#
# (WITH_MQ=true only installs the `ibmmq` Python package; it needs the IBM MQ redistributable client
# libraries at run time, which this image does not ship: mount them or build a derived image.)
#
# Run (host metrics of the machine the container runs on: mount the host's /proc and /sys):
#   docker run -d --name middleware-exporter -p 19462:19462 --read-only --cap-drop=ALL \
#     --security-opt no-new-privileges \
#     -v /proc:/host/proc:ro -v /sys:/host/sys:ro \
#     -v "$PWD/config.yaml:/etc/middleware-exporter/config.yaml:ro" \
#     middleware-exporter run --path.procfs /host/proc --path.sysfs /host/sys \
#       --config /etc/middleware-exporter/config.yaml
#
# Arguments after the image name replace CMD, so they start with the command (`run`). Instead of the flags,
# MIDDLEWARE_EXPORTER_PATHS__PROCFS=/host/proc, MIDDLEWARE_EXPORTER_PATHS__SYSFS=/host/sys and
# MIDDLEWARE_EXPORTER_CONFIG=/etc/middleware-exporter/config.yaml work too. Add --pid=host to see the
# host's processes in the process collector. The image writes nothing at run time, so --read-only works.
#
# tests/test_dockerfile.py lints this file and replays the builder stage's
# `/opt/venv/bin/pip install` commands in a fresh virtual environment: keep each one on its own RUN line.

ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

# ---------------------------------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE} AS builder

ARG WITH_MQ=false

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

RUN python -m venv /opt/venv

COPY . /src

RUN /opt/venv/bin/pip install --no-cache-dir /src
# Kept apart from the line above so that the test can replay each install step on its own.
# hadolint ignore=DL3059
RUN if [ "$WITH_MQ" = "true" ]; then /opt/venv/bin/pip install --no-cache-dir "/src[mq]"; fi

# ---------------------------------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE} AS runtime

ARG VERSION=0.1.0
ARG SOURCE_URL=""

LABEL org.opencontainers.image.title="middleware-exporter" \
      org.opencontainers.image.description="Prometheus exporter and alerting agent for HPOM, Oracle, IBM MQ, Verastream Host Integrator and Domino servers" \
      org.opencontainers.image.source="${SOURCE_URL}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}"

# No home directory and no writable path is needed: the exporter only reads its config, /proc and /sys.
RUN groupadd --system --gid 10001 exporter \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin exporter

COPY --from=builder /opt/venv /opt/venv

ENV PATH=/opt/venv/bin:$PATH \
    VIRTUAL_ENV=/opt/venv \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

USER 10001

EXPOSE 19462

# Python's stdlib (slim images have no curl). The port follows MIDDLEWARE_EXPORTER_WEB__LISTEN_ADDRESS when set;
# a --web.listen-address flag on another port needs a matching --health-cmd.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, sys, urllib.request; port = (os.environ.get('MIDDLEWARE_EXPORTER_WEB__LISTEN_ADDRESS') or ':19462').rsplit(':', 1)[1]; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:' + port + '/healthz', timeout=4).status == 200 else 1)"]

ENTRYPOINT ["middleware-exporter"]
CMD ["run"]
