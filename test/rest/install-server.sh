#!/usr/bin/env bash
# Installs the REST catalog server of the REST client tests (server/pom.xml, server/RestServer.java):
# Iceberg's pinned jars resolved from Maven Central by Maven into .interop/rest-server/jars, and
# RestServer.java compiled into .interop/rest-server/classes. Idempotent (a stamp per pin and
# source hash). Exit 3 means Maven Central could not be reached (the suite then skips, loudly).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=.interop/rest-server
src=test/rest/server
hash=$(cat "$src/pom.xml" "$src/RestServer.java" | sha256sum | cut -c1-16)
stamp="$root/installed-$hash"
if [ -f "$stamp" ]; then echo "REST catalog server already installed ($stamp)"; exit 0; fi
if ! command -v mvn >/dev/null 2>&1; then apt-get update && apt-get install -y --no-install-recommends maven; fi
if ! command -v javac >/dev/null 2>&1; then apt-get update && apt-get install -y --no-install-recommends openjdk-17-jdk-headless; fi
rm -rf "$root" && mkdir -p "$root/jars" "$root/classes"
log=$root/mvn.log
if ! mvn -q -B -f "$src/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$PWD/$root/jars" >"$log" 2>&1; then
  cat "$log" >&2
  if grep -qiE 'transfer failed|could not transfer|unknownhost|connect timed out|connection refused' "$log"; then
    echo "!!! Maven Central could not be reached: see $log" >&2
    exit 3
  fi
  exit 1
fi
javac -d "$root/classes" -cp "$root/jars/*" "$src/RestServer.java"
touch "$stamp"
echo "REST catalog server installed into $root"
