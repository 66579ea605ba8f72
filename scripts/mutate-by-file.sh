#!/usr/bin/env bash
# `npm run mutate:files [name ...]`: the mutation score of each core file, one Stryker run
# per file with only the test files that exercise it (docs/contributing.md; the list of names, files
# and test files is scripts/lib/mutation-files.mjs). Each run's first pass (the whole suite with
# coverage) then takes a minute instead of ten, so all ten take about an hour on two CPUs where one
# `npm run mutate` over everything takes hours. The score is a lower bound of the full run's: a
# mutant only an unlisted test file would kill shows as surviving.
# Reports: reports/mutation/<name>.json and .html. After each run its rows of the committed record
# docs/mutation-scores.json (blob id of the file measured, counts, every undetected mutant) and the
# table in docs/contributing.md are rewritten; the other rows stay as they were.
set -euo pipefail
cd "$(dirname "$0")/.."

list=$(node scripts/lib/mutation-files.mjs "$@")
npm run --silent gen
mkdir -p reports/mutation
while IFS=$'\t' read -r name mutate tests; do
  echo "== $name: $mutate ($(date -u +%H:%M:%S))"
  # Incremental per file: a rerun tests only the mutants whose code or covering tests changed.
  # STRYKER_ARGS: more options for every run, e.g. "--concurrency 3" (one process checks types, the rest test).
  # shellcheck disable=SC2086
  nice -n 10 npx stryker run --mutate "$mutate" --testFiles "$tests" ${STRYKER_ARGS:-} \
    --incrementalFile "reports/stryker-$name.json" --reporters json,html,progress </dev/null
  cp reports/mutation/mutation.json "reports/mutation/$name.json"
  cp reports/mutation/index.html "reports/mutation/$name.html"
  node scripts/mutation-table.mjs --record "$name"
done <<< "$list"
