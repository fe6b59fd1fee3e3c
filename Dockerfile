# aeh in a container: the core install, `aeh` as the entrypoint, a non-root user, runs in /runs.
#
#   docker build -t aeh .
#   docker compose run --rm harness tasks validate
#   docker compose run --rm harness run --suite smoke --adapter mock --attempts 5 --seed 1
#
# BASE is any image with Python >= 3.11 and its venv module; where Docker Hub is out of reach,
# build one from Debian packages (docs/docker.md shows how) and pass --build-arg BASE=...
ARG BASE=python:3.11-slim
FROM ${BASE}

ENV PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/aeh/bin:$PATH \
    AEH_DB=/runs/runs.db

# uv comes from PyPI, like everything else the image installs.
RUN python3 -m venv /opt/aeh && /opt/aeh/bin/pip install --no-cache-dir -q uv

WORKDIR /src
COPY pyproject.toml README.md ./
COPY aeh ./aeh
COPY suites ./suites
COPY notebooks ./notebooks
# A regular (not editable) install of the core, byte-compiled, with the wheel's copy of the suites
# (suites/, linked from aeh/_bundled/suites) and notebooks (notebooks/, linked from aeh/_bundled/notebooks); the `coding`
# extra (pytest) so the shipped coding suite can grade.
RUN /opt/aeh/bin/uv pip install --no-cache -q --compile-bytecode -p /opt/aeh "/src[coding]" \
    && rm -rf /src

RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin aeh \
    && mkdir /runs && chown aeh:aeh /runs
USER aeh
WORKDIR /home/aeh
VOLUME ["/runs"]
ENTRYPOINT ["aeh"]
CMD ["--help"]
