#!/usr/bin/env bash
# clang-tidy (.clang-tidy, every warning an error) over the C++ sources that
# a change touches: the files changed between UNCORE_TIDY_BASE (default: the
# parent of HEAD, i.e. the last commit's change) and the working tree, under
# sdk/, tools/, integrations/ and examples/.
#
#   bash scripts/tidy.sh BUILD_DIR          # BUILD_DIR has compile_commands.json
#   UNCORE_TIDY_BASE=origin/main bash scripts/tidy.sh build
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: tidy.sh BUILD_DIR}
base=${UNCORE_TIDY_BASE:-HEAD~1}
scope=('sdk/*.cc' 'tools/*.cc' 'integrations/*.cc' 'examples/*.cc')
if git rev-parse -q --verify "$base^{commit}" >/dev/null; then
  mapfile -t files < <(git diff --name-only --diff-filter=d "$base" -- \
    "${scope[@]}" | sort -u)
else
  # A shallow clone (or a first commit) has no base: check every file.
  echo "tidy: no commit '$base' here: checking every C++ source"
  mapfile -t files < <(git ls-files -- "${scope[@]}")
fi
# Only files the build compiles (a generated table has no checks to pass).
checked=()
for f in "${files[@]}"; do
  [[ $f == */event_catalog_data.cc ]] && continue
  grep -q "\"file\": \"[^\"]*/$f\"" "$build/compile_commands.json" &&
    checked+=("$f")
done
if ((${#checked[@]} == 0)); then
  echo "tidy: no C++ source changed since $base"
  exit 0
fi
echo "tidy: ${#checked[@]} file(s) changed since $base"
log=$(mktemp)
status=0
printf '%s\n' "${checked[@]}" |
  xargs -P "$(nproc)" -n 1 clang-tidy -p "$build" --quiet \
    --warnings-as-errors='*' >"$log" 2>&1 || status=$?
grep -v '^[0-9]* warnings\? \(and [0-9]* errors\? \)\?generated\.$' "$log" || true
rm -f "$log"
if ((status != 0)); then
  echo "tidy: clang-tidy found problems (above)"
  exit 1
fi
echo "tidy: clean"
