#!/usr/bin/env bash
# Installs the real engines the interop suite runs, pinned, into git-ignored folders:
#   .interop/venv  Python venv: pyiceberg + pyarrow + s3fs, pyspark, duckdb + duckdb-ext-iceberg
#   .interop/jars  Iceberg's Spark runtime and AWS bundle, resolved from Maven Central by Maven
# Idempotent: a stamp file records what was installed; a second run with the same pins is instant.
# Exit 3 means a registry could not be reached (the suite then skips, loudly); anything else fails.
set -euo pipefail
cd "$(dirname "$0")/../.."

# --- pins (docs/engines.md lists them; change them together) ---
PYICEBERG=0.12.0
PYARROW=22.0.0
S3FS=2025.10.0
PYSPARK=4.1.1
SCALA=2.13
SPARK_MINOR=4.1
ICEBERG=1.12.0
DUCKDB=1.4.4
DUCKDB_ICEBERG=1.4.4.20260205
DUCKDB_EXT=0.1.2

root=.interop
venv=$root/venv
jars=$root/jars
stamp="$root/installed-$PYICEBERG-$PYARROW-$S3FS-$PYSPARK-$ICEBERG-$DUCKDB-$DUCKDB_ICEBERG-$DUCKDB_EXT"
mkdir -p "$root" "$jars"
if [ -f "$stamp" ]; then echo "interop engines already installed ($stamp)"; exit 0; fi

unreachable() { echo "!!! $1 could not be reached: $2" >&2; exit 3; }

PYTHON=${PYTHON:-python3}
if [ ! -x "$venv/bin/python" ]; then
  "$PYTHON" -m venv "$venv" || { apt-get update && apt-get install -y --no-install-recommends python3-venv && "$PYTHON" -m venv "$venv"; }
fi
pip_log=$root/pip.log
if ! "$venv/bin/python" -m pip install --disable-pip-version-check -q \
    "pyiceberg[pyarrow,s3fs,dynamodb]==$PYICEBERG" "pyarrow==$PYARROW" "s3fs==$S3FS" \
    "pyspark==$PYSPARK" "duckdb==$DUCKDB" "duckdb-ext==$DUCKDB_EXT" "duckdb-ext-iceberg==$DUCKDB_ICEBERG" \
    "duckdb-ext-httpfs==$DUCKDB_ICEBERG" "duckdb-ext-avro==$DUCKDB_ICEBERG" >"$pip_log" 2>&1; then
  cat "$pip_log" >&2
  if grep -qiE 'connection|timed out|temporary failure|name resolution|network is unreachable' "$pip_log"; then
    unreachable PyPI "see $pip_log"
  fi
  exit 1
fi

if ! command -v mvn >/dev/null 2>&1; then apt-get update && apt-get install -y --no-install-recommends maven; fi
mvn_log=$root/mvn.log
for artifact in "org.apache.iceberg:iceberg-spark-runtime-${SPARK_MINOR}_${SCALA}:$ICEBERG" "org.apache.iceberg:iceberg-aws-bundle:$ICEBERG"; do
  if ! mvn -q -B dependency:copy -Dartifact="$artifact" -DoutputDirectory="$jars" -Dmdep.overWriteIfNewer=true >"$mvn_log" 2>&1; then
    cat "$mvn_log" >&2
    if grep -qiE 'transfer failed|could not transfer|unknownhost|connect timed out|connection refused' "$mvn_log"; then
      unreachable "Maven Central" "see $mvn_log"
    fi
    exit 1
  fi
done
ls "$jars"
touch "$stamp"
echo "interop engines installed into $root"
