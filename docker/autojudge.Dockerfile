# Proctor as a TREC AutoJudge judge: the code submission (docs/autojudge.md).
#   docker build -f docker/autojudge.Dockerfile -t proctor-autojudge .
#   docker run --rm -v $PWD/task:/data:ro -v $PWD/out:/output \
#       -e OPENAI_BASE_URL -e OPENAI_MODEL -e OPENAI_API_KEY proctor-autojudge
# VARIANT picks the workflow variant (embedded needs no endpoint). Stores in state/ (the out-dir of your own
# runs: embedded.db, llm.db, ...) are copied into the image, so the judge replays its grades without an
# endpoint: the organisers' deterministic re-run.
FROM python:3.11-slim

ENV PIP_NO_CACHE_DIR=1 HF_HUB_OFFLINE=1 NLTK_DATA=/usr/share/nltk_data VARIANT=embedded
WORKDIR /proctor
COPY pyproject.toml README.md ./
COPY src ./src
# torch's CPU wheels; autojudge-base reads NLTK stopwords and punkt at import: fetched at build time only
RUN pip install --extra-index-url https://download.pytorch.org/whl/cpu ".[autojudge,embed]" \
    && python -m nltk.downloader -d /usr/share/nltk_data stopwords punkt \
    && cp src/proctor/autojudge/workflow.yml /proctor/workflow.yml
COPY docker/state/ /proctor/state/

CMD ["sh", "-c", "mkdir -p /output && cp -n /proctor/state/*.db /output/ 2>/dev/null; exec auto-judge run --workflow /proctor/workflow.yml --variant \"$VARIANT\" --rag-responses /data/responses --rag-topics /data/topics.jsonl --nugget-banks /data/banks.jsonl --out-dir /output"]
