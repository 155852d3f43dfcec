# The crawler as a container: `docker run --rm -v "$PWD:/work" crawler robots /work/robots.txt /page`
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY pyproject.toml README.md ./
COPY crawler ./crawler
COPY config ./config
RUN pip install . && useradd --create-home --uid 10001 crawler

USER crawler
WORKDIR /home/crawler
ENTRYPOINT ["crawl"]
CMD ["--help"]
