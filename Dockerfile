# gatecli serve in a container: the runtime, the shipped model and the [serve] extra only
# (no torch). Build and run (docs/serve.md):
#
#   docker build -t gatecli .
#   docker run --rm -p 127.0.0.1:8088:8088 -e GATECLI_API_KEY=change-me gatecli
#
# Docker sends SIGTERM on `docker stop` and waits 10 s by default: the server drains the
# requests in flight (at most --drain-timeout 8 s here) and exits 0 before the SIGKILL.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1

WORKDIR /src
# Only what `pip install .` reads: the metadata, the three packages and the model data.
COPY pyproject.toml README.md ./
COPY cli cli
COPY train train
COPY models models
RUN pip install ".[serve]" \
    && rm -rf /src \
    && useradd --create-home --uid 10001 --shell /usr/sbin/nologin gate

USER gate
WORKDIR /home/gate
EXPOSE 8088

# /healthz needs no API key; python is there, curl is not (slim image).
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8088/healthz', timeout=2)"]

# 0.0.0.0 inside the container so a published port reaches it; publish it on 127.0.0.1
# (as above) or set GATECLI_API_KEY before exposing it further.
ENTRYPOINT ["gatecli", "serve"]
CMD ["--host", "0.0.0.0", "--port", "8088", "--drain-timeout", "8"]
