# syntax=docker/dockerfile:1
#
# middleware-exporter container image.
#
# Build (one architecture, into the local engine; `middleware-exporter:0.1.0` is what the Helm chart runs when
# image.registry is empty):
#   docker build -t middleware-exporter:0.1.0 .
#   docker build --build-arg WITH_MQ=true -t middleware-exporter:0.1.0-mq .    # + the ibmmq PCF back-end
#
# Build and push for amd64 and arm64 (BuildKit; arm64 runs under QEMU on an amd64 builder), then install the chart
# with image.registry=<registry>: it runs <registry>/middleware-exporter:<appVersion> (docs/deployment.md, "Image"):
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     --build-arg BUILD_DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ) --build-arg VCS_REF=$(git rev-parse HEAD) \
#     -t <registry>/middleware-exporter:0.1.0 --push .
#
# Reproducible: the base image is pinned by digest (ARG PYTHON_IMAGE; after a bump of the tag, take the new digest
# from `docker buildx imagetools inspect python:<tag>`, the index digest that covers every architecture), and every
# Python package comes from a lock with sha256 hashes, as binary wheels (packaging/image/*.lock, each with the
# command that regenerates it in its header). The exporter itself is installed with --no-index --no-deps, so
# nothing unpinned is fetched. The runtime stage has no pip, setuptools or wheel.
#
# (WITH_MQ=true only installs the `ibmmq` Python package, linux/amd64 only: ibmmq publishes no arm64 wheel. It needs
# the IBM MQ redistributable client libraries at run time, which this image does not ship: mount them or build a
# derived image.)
#
# Run (host metrics of the machine the container runs on: mount the host's /proc, /sys and / for the file systems):
#   docker run -d --name middleware-exporter -p 19462:19462 --read-only --cap-drop=ALL \
#     --security-opt no-new-privileges \
#     -v /proc:/host/proc:ro -v /sys:/host/sys:ro -v /:/host/root:ro,rslave \
#     -v "$PWD/config.yaml:/etc/middleware-exporter/config.yaml:ro" \
#     middleware-exporter:0.1.0 run --path.procfs /host/proc --path.sysfs /host/sys --path.rootfs /host/root \
#       --config /etc/middleware-exporter/config.yaml
#
# Arguments after the image name replace CMD, so they start with the command (`run`). Instead of the flags,
# MIDDLEWARE_EXPORTER_PATHS__PROCFS=/host/proc, MIDDLEWARE_EXPORTER_PATHS__SYSFS=/host/sys,
# MIDDLEWARE_EXPORTER_PATHS__ROOTFS=/host/root and
# MIDDLEWARE_EXPORTER_CONFIG=/etc/middleware-exporter/config.yaml work too. Add --pid=host to see the
# host's processes in the process collector. The image writes nothing at run time, so --read-only works.
#
# tests/deploy/test_dockerfile.py lints this file, checks the locks, and replays the builder stage's
# `/opt/venv/bin/pip install` and `uninstall` commands in a fresh virtual environment: keep each one on its own
# RUN line.

# python:3.11.16-slim-bookworm, pinned by the digest of its multi-platform index (amd64, arm64, ...; the Docker
# Official Images build of 25 Aug 2026, as docker-library/repo-info records it for python:3.11-slim-bookworm).
ARG PYTHON_IMAGE=python:3.11.16-slim-bookworm@sha256:0bee7276f83efd4a1ee05bbbf4281d95ed28e079220a9457f25a93e3f1e3c31b

# ---------------------------------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE} AS builder

ARG WITH_MQ=false

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

RUN python -m venv /opt/venv

# The locks first, so that the dependency layers stay cached while only the exporter's source changes.
COPY packaging/image/ /src/packaging/image/

# The build back-end of the exporter's own install below (setuptools), removed again at the end.
RUN /opt/venv/bin/pip install --no-cache-dir --require-hashes --no-deps --only-binary=:all: -r /src/packaging/image/build.lock
# One RUN per step (DL3059 ignored): each is a cache layer of its own and the test replays each on its own.
# hadolint ignore=DL3059
RUN /opt/venv/bin/pip install --no-cache-dir --require-hashes --no-deps --only-binary=:all: -r /src/packaging/image/requirements.lock
# hadolint ignore=DL3059
RUN if [ "$WITH_MQ" = "true" ]; then /opt/venv/bin/pip install --no-cache-dir --require-hashes --no-deps --only-binary=:all: -r /src/packaging/image/requirements-mq.lock; fi

COPY . /src

RUN /opt/venv/bin/pip install --no-cache-dir --no-index --no-deps --no-build-isolation /src
# Nothing installs at run time: the venv keeps no installer and no build back-end.
# hadolint ignore=DL3059
RUN /opt/venv/bin/pip uninstall --yes pip setuptools

# ---------------------------------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE} AS runtime

# The ssh client of the probe modules (docs/estate.md: hosts read through ssh); WITH_SSH=false leaves it out.
# Pinned to bookworm's 9.2p1 security line: a point release of the same line is taken, no other.
ARG WITH_SSH=true
# hadolint ignore=DL3059
RUN if [ "$WITH_SSH" = "true" ]; then apt-get update \
    && apt-get install --yes --no-install-recommends "openssh-client=1:9.2p1-2+deb12u*" \
    && rm -rf /var/lib/apt/lists/*; fi

# No home directory and no writable path is needed: the exporter only reads its config, /proc and /sys.
# The base image's own pip, setuptools and wheel go too.
RUN python -m pip uninstall --yes --root-user-action=ignore pip setuptools wheel \
    && groupadd --system --gid 10001 exporter \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin exporter

COPY --from=builder /opt/venv /opt/venv

ENV PATH=/opt/venv/bin:$PATH \
    VIRTUAL_ENV=/opt/venv \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

USER 10001

EXPOSE 19462

# `middleware-exporter healthcheck` reads the serving process's (PID 1's) flags, environment and files, and probes
# /healthz where and as it serves: the port of the configuration file or the flags, the address it listens on,
# https with the certificate of --web.config.file, basic auth's 401 counting as an answer (docs/deployment.md).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["middleware-exporter", "healthcheck"]

ENTRYPOINT ["middleware-exporter"]
CMD ["run"]

# Last, so that a new BUILD_DATE or VCS_REF does not invalidate the cached layers above (docker buildx build
# --build-arg BUILD_DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ) --build-arg VCS_REF=$(git rev-parse HEAD)).
ARG VERSION=0.1.0
ARG BUILD_DATE=""
ARG VCS_REF=""
ARG SOURCE_URL=https://github.com/middleware-exporter/middleware-exporter

LABEL org.opencontainers.image.title="middleware-exporter" \
      org.opencontainers.image.description="Prometheus exporter and alerting agent for HPOM, Oracle, IBM MQ, Verastream Host Integrator and Domino servers" \
      org.opencontainers.image.source="${SOURCE_URL}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.created="${BUILD_DATE}" \
      org.opencontainers.image.revision="${VCS_REF}"
