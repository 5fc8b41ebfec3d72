#!/bin/sh
# Builds taskforge-coverage.jar (listener + reader) from Debian's jars; no network.
set -e
J=/usr/share/java
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HERE/build}
rm -rf "$OUT" && mkdir -p "$OUT/classes/META-INF/services"
javac --release 8 -nowarn -d "$OUT/classes" \
  -cp $J/junit-platform-launcher.jar:$J/junit-platform-engine.jar:$J/junit-platform-commons.jar:$J/org.jacoco.agent.rt.jar:$J/org.jacoco.core.jar:$J/apiguardian-api.jar \
  $(find "$HERE/src" -name '*.java')
cp "$HERE/META-INF/services/org.junit.platform.launcher.TestExecutionListener" "$OUT/classes/META-INF/services/"
jar cf "$OUT/taskforge-coverage.jar" -C "$OUT/classes" .
# The agent itself is nested in Debian's org.jacoco.agent.jar.
(cd "$OUT" && unzip -o -q $J/org.jacoco.agent.jar jacocoagent.jar)
echo "$OUT/taskforge-coverage.jar $OUT/jacocoagent.jar"
