#!/usr/bin/env bash
# The baseline a user would otherwise write: for each unit (metric x UTC day), curl follows `next` and jq turns each
# page into NDJSON rows with the importer's fields; 4 units in flight (xargs -P 4), like the importer's default.
# No validation, no completeness check, no sorting, no atomic files: it is the cheap version, on purpose.
#
# Usage: AREA_METRICS_CLIENT_ID=... AREA_METRICS_CLIENT_SECRET=... bench/curl-jq.sh BASE_URL FROM TO OUTDIR [PAGE_SIZE]
#   FROM/TO: YYYY-MM-DD (inclusive, UTC). Writes OUTDIR/<metric>/<day>.ndjson.
set -euo pipefail

base_url=${1:?base url}
from=${2:?from day}
to=${3:?to day}
out=${4:?output dir}
page_size=${5:-1000}
for tool in curl jq; do
  command -v "$tool" >/dev/null || { echo "curl-jq.sh: $tool is not installed (apt-get install -y $tool)" >&2; exit 127; }
done

mkdir -p "$out"
# Credentials go to curl through a config file, not argv, so `ps` never shows the secret.
curl_config="$out/.curl-config"
( umask 077; printf 'user = "%s:%s"\n' "${AREA_METRICS_CLIENT_ID:?}" "${AREA_METRICS_CLIENT_SECRET:?}" >"$curl_config" )
export base_url out page_size curl_config

fetch_unit() {
  local metric=$1 day=$2
  local value_fields
  case $metric in
    unique-users) value_fields='unique_users: .unique_users' ;;
    avg-screen-time) value_fields='avg_screen_time: .avg_screen_time, avg_screen_time_seconds: (.avg_screen_time | split(":") | map(tonumber) | .[0] * 3600 + .[1] * 60 + .[2])' ;;
    traffic) value_fields='traffic_pct: (.traffic_pct | tonumber)' ;;
  esac
  mkdir -p "$out/$metric"
  local target="$out/$metric/$day.ndjson" page="$out/$metric/.$day.page.json"
  local url="$base_url/api/bi/area-metrics/$metric/?datetime_gte=${day}T00%3A00%3A00Z&datetime_lte=${day}T23%3A59%3A59Z&page_size=$page_size"
  : >"$target"
  while [ -n "$url" ] && [ "$url" != null ]; do
    curl -sS --fail -K "$curl_config" -o "$page" "$url"
    jq -c --arg metric "$metric" \
      ".results[] | . as \$r | .values[] | {metric: \$metric, store_code: \$r.store_code, date: \$r.date, day: \$r.date[0:10], granularity: \$r.granularity, zone: (.zone // .zone_name), $value_fields}" \
      "$page" >>"$target"
    url=$(jq -r '.next' "$page")
  done
  rm -f "$page"
}
export -f fetch_unit

units() {
  local metric day
  for metric in unique-users avg-screen-time traffic; do
    day=$from
    while [[ ! $day > $to ]]; do
      printf '%s %s\n' "$metric" "$day"
      day=$(date -u -d "$day + 1 day" +%F)
    done
  done
}

units | xargs -P 4 -n 2 bash -c 'fetch_unit "$@"' _
rm -f "$curl_config"
