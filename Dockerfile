# Proctor as a TREC AutoJudge judge: the code submission (docs/autojudge.md, "Submit to TIRA"). tira-cli
# builds this file from the repository root and runs the judge with the --command of the submission, e.g.
#   auto-judge run --workflow /auto-judge/judges/proctor/workflow.yml --variant embedded \
#       --rag-responses $inputDataset/runs/*/ --rag-topics $inputDataset/topics/*.jsonl --out-dir $outputDir
# (the LLM endpoint from the forwarded OPENAI_BASE_URL, OPENAI_MODEL, OPENAI_API_KEY; the prompt cache from
# the mounted CACHE_DIR). Nothing here names an input or output path: the command does.
#
# The track's base image (built from the starter kit's .devcontainer/Dockerfile): Python 3.11 in /venv (its
# PATH runs /venv/bin), uv, autojudge-base, and NLTK's stopwords and punkt.
FROM ghcr.io/trec-auto-judge/trec-auto-judge-base:dev-0.0.1

# the embedded grader's model ships as a package: nothing is downloaded when the judge runs
ENV HF_HUB_OFFLINE=1

# Proctor from this repository's source (it is on no package index), installed into the base image's /venv
# (a --system install would be invisible at run time). torch's CPU build first: the default index's torch is
# a multi-GB CUDA build. The extras: autojudge (the runner, autojudge-base >= 1.0) and embed (MiniLM).
COPY pyproject.toml README.md /opt/proctor/
COPY src /opt/proctor/src
RUN . /venv/bin/activate \
    && uv pip install --index-url https://download.pytorch.org/whl/cpu "torch==2.13.0" \
    && uv pip install "/opt/proctor[autojudge,embed]" \
    && rm -rf /opt/proctor

# the workflows where the submission's --command names them
COPY src/proctor/autojudge/workflow.yml src/proctor/autojudge/workflow-nuggetizer.yml /auto-judge/judges/proctor/

WORKDIR /auto-judge

# git metadata for provenance (tira's runtime statistics look for a repository at ./), as the starter kit does
ADD .git /auto-judge/.git
