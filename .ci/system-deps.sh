#!/usr/bin/env bash
# What the test suite needs from the system, installed or started when missing:
#  - Debian's Chromium, driven by Playwright in the review app's real-browser test (no browser download);
#  - Tesseract OCR (English data), read by ingestion for pages without a usable text layer;
#  - PostgreSQL at 127.0.0.1:5432 (DATABASE tests run against it as well as SQLite);
#  - PgBouncer (the binary only: the test starts its own, in transaction pooling mode, on a free port).
# Needs root (or sudo) only when something is missing.
set -euo pipefail

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v chromium >/dev/null 2>&1; then
  echo "installing Debian's chromium for the browser test"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

if ! command -v tesseract >/dev/null 2>&1; then
  echo "installing Debian's tesseract-ocr for the OCR fallback"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tesseract-ocr tesseract-ocr-eng >/dev/null
fi

if ! command -v pgbouncer >/dev/null 2>&1 && [ ! -x /usr/sbin/pgbouncer ]; then
  echo "installing Debian's pgbouncer for the connection-pooling test"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >/dev/null
fi

if command -v pg_isready >/dev/null 2>&1 && ! pg_isready -h 127.0.0.1 -p 5432 -q; then
  echo "starting PostgreSQL"
  as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start
fi
