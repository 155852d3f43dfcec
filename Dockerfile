# The crawler as a container: `docker run --rm -v "$PWD:/work" crawler robots /work/robots.txt /page`
# Two stages: the wheel (with the compiled page walk, crawler/page/_pagescan.c) is built where a C
# compiler is, and only the wheel reaches the image.
FROM python:3.11-slim AS build

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY crawler ./crawler
RUN pip wheel --no-deps --wheel-dir /wheels . \
    && python -m zipfile -l /wheels/*.whl | grep -q "_pagescan" \
    || { echo "the compiled page walk did not build" >&2; exit 1; }

FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

COPY --from=build /wheels /wheels
COPY config /app/config
RUN pip install /wheels/*.whl && rm -rf /wheels && useradd --create-home --uid 10001 crawler

USER crawler
WORKDIR /home/crawler
ENTRYPOINT ["crawl"]
CMD ["--help"]
