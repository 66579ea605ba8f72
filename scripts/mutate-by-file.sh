#!/usr/bin/env bash
# `npm run mutate:files [name ...]`: the mutation score of each core file, one Stryker run
# per file with only the test files that exercise it (docs/contributing.md). Each run's first pass
# (the whole suite with coverage) then takes a minute instead of ten, so all ten take about an
# hour on two CPUs where one `npm run mutate` over everything takes hours. The score is a lower
# bound of the full run's: a mutant only an unlisted test file would kill shows as surviving.
# Reports: reports/mutation/<name>.json and .html; the table at the end is written into
# docs/contributing.md (its generated block "mutation") once every file has a report.
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A MUTATE TESTS
add() { MUTATE[$1]=$2; TESTS[$1]=$3; }
add machine src/domain/machine.ts test/machine.test.ts,test/bills-rules.test.ts,test/vendor-payments.test.ts,test/webhooks-machine.test.ts,test/receivables-events.test.ts,test/payments.test.ts,test/payouts.test.ts
add pagination src/http/pagination.ts test/customers.test.ts,test/bills.test.ts,test/invoices.test.ts,test/platform.test.ts,test/webhooks-subscriptions.test.ts
add idempotency src/store/idempotency.ts test/idempotency.test.ts,test/idempotency-restart.test.ts,test/retention.test.ts,test/vendor-payments.test.ts,test/checkout.test.ts,test/persistence.test.ts
add bills 'src/domain/bills/**/*.ts' test/bills.test.ts,test/bills-rules.test.ts,test/ocr.test.ts,test/pdf.test.ts,test/vendor-payments.test.ts,test/accounting-sync.test.ts,test/fixtures.test.ts,test/limits.test.ts,test/blobs.test.ts,test/vendors.test.ts
add queue src/webhooks/queue.ts test/webhooks-delivery.test.ts,test/webhooks-durability.test.ts,test/webhooks-fire.test.ts,test/webhooks-history.test.ts,test/webhooks-machine.test.ts,test/webhooks-queue.test.ts,test/webhooks-subscriptions.test.ts,test/retention.test.ts
add scheduler src/clock/scheduler.ts test/scheduler.test.ts,test/clock-limit.test.ts,test/webhooks-queue.test.ts,test/bills-rules.test.ts,test/payouts.test.ts,test/persistence.test.ts,test/durability.test.ts
add tokens src/auth/tokens.ts test/tokens.test.ts,test/tokens-lifetime.test.ts,test/auth.test.ts,test/token-endpoint.test.ts,test/control-partners.test.ts,test/persistence.test.ts,test/journal.test.ts
add engine src/scenarios/engine.ts test/scenarios.test.ts,test/scenario-matching.test.ts,test/scenarios-shipped.test.ts,test/prefer.test.ts,test/journal.test.ts
add work src/store/unit-of-work.ts test/unit-of-work.test.ts,test/accounting-sync.test.ts,test/bills.test.ts,test/vendor-payments.test.ts
add state src/store/module-state.ts test/unit-of-work.test.ts,test/persistence.test.ts,test/idempotency-restart.test.ts,test/webhooks-queue.test.ts,test/scenarios.test.ts,test/blobs.test.ts
ORDER=(machine pagination idempotency bills queue scheduler tokens engine work state)

names=("$@")
[ ${#names[@]} -eq 0 ] && names=("${ORDER[@]}")
for name in "${names[@]}"; do
  [ -n "${MUTATE[$name]:-}" ] || { echo "unknown file name: $name (one of: ${ORDER[*]})" >&2; exit 2; }
done

npm run --silent gen
mkdir -p reports/mutation
for name in "${names[@]}"; do
  echo "== $name: ${MUTATE[$name]} ($(date -u +%H:%M:%S))"
  # Incremental per file: a rerun tests only the mutants whose code or covering tests changed.
  # STRYKER_ARGS: more options for every run, e.g. "--concurrency 3" (one process checks types, the rest test).
  # shellcheck disable=SC2086
  nice -n 10 npx stryker run --mutate "${MUTATE[$name]}" --testFiles "${TESTS[$name]}" ${STRYKER_ARGS:-} \
    --incrementalFile "reports/stryker-$name.json" --reporters json,html,progress
  cp reports/mutation/mutation.json "reports/mutation/$name.json"
  cp reports/mutation/index.html "reports/mutation/$name.html"
done

node scripts/mutation-table.mjs --write "${ORDER[@]/#/reports/mutation/}"
