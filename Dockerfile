# The crawler as a container (README, "In a container"). Build and crawl:
#   docker build -t crawler .
#   docker run --rm -v crawl-data:/crawl/crawl-data -v "$PWD/seeds.txt:/crawl/seeds.txt:ro" \
#     crawler seeds.txt --user-agent 'MyBot/1.0 (+https://mysite.example/bot)'
# Two stages: the wheel (with the compiled page walk, crawler/page/_pagescan.c, and the index's
# CJK marking, crawler/output/_cjkmark.c) is built where a C compiler is, and only the wheel
# reaches the image.
FROM python:3.11-slim AS build

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY crawler ./crawler
# setup.py lets the extensions fail to build (an install without a compiler runs their Python);
# the image must not, so the wheel must hold the built shared objects, not only the .c and .pyi
# (grep shows the line it found). tests/test_container.py runs this step outside Docker.
RUN pip wheel --no-deps --wheel-dir /wheels . \
    && { python -m zipfile -l /wheels/*.whl | grep -E '^crawler/page/_pagescan\.[^ ]+\.so ' \
    || { echo "the compiled page walk did not build" >&2; exit 1; }; } \
    && { python -m zipfile -l /wheels/*.whl | grep -E '^crawler/output/_cjkmark\.[^ ]+\.so ' \
    || { echo "the compiled CJK marking did not build" >&2; exit 1; }; }

FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

COPY --from=build /wheels /wheels
COPY config /app/config
RUN pip install /wheels/*.whl && rm -rf /wheels \
    && useradd --create-home --uid 10001 crawler \
    && mkdir -p /crawl/crawl-data && chown -R crawler:crawler /crawl
# The walk a crawl here would run: the compiled one, loaded and trusted (its layout checks pass
# against the selectolax installed in this image), and the compiled CJK marking; else the build
# stops and says why.
RUN crawl --version \
    && python -c "import sys; from crawler.page.compiled import WALK; \
sys.exit(None if WALK == 'compiled' else 'the image would crawl on the page walk ' + WALK)" \
    && python -c "import sys; from crawler.output.cjk import marked, python_marked; \
sys.exit('the image would mark CJK text in Python' if marked is python_marked else None)"

USER crawler
# output.data_dir's default, crawl-data, is relative to the working directory: /crawl/crawl-data,
# a volume, so the crawl's state and index outlive the container and the next one resumes it. A
# named volume starts out owned by the crawler user; a host directory mounted there must be
# writable by it (uid 10001), or run with --user "$(id -u):$(id -g)".
WORKDIR /crawl
VOLUME /crawl/crawl-data
ENTRYPOINT ["crawl"]
CMD ["--help"]
