# The Pooljudge image of compose.yaml: the project and its pinned dependencies; the role is the command
# (deploy/run-production.sh web | worker | gpu).
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 VENV=""
WORKDIR /app
COPY pyproject.toml requirements.lock README.md ./
COPY config config
COPY annotation annotation
COPY assessments assessments
COPY retrieval retrieval
RUN pip install --no-cache-dir -c requirements.lock .
COPY manage.py ./
COPY templates templates
COPY deploy deploy
COPY data data
RUN useradd --create-home pooljudge && mkdir -p /app/var && chown pooljudge /app/var
USER pooljudge
EXPOSE 8000
CMD ["deploy/run-production.sh", "web"]
