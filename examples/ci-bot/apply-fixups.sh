#!/usr/bin/env bash
# Turns a generator's output (a unified diff from a formatter, a linter's --fix --diff, a codemod)
# into one commit on a branch, all or nothing, with patchgate, and keeps patchgate's markdown report
# in a file for a pull-request comment. The working tree, the index and HEAD are never touched.
#
# usage: apply-fixups.sh [-C DIR] [-b BRANCH] [-m MESSAGE] [-o REPORT] [-a PATCHGATE_ARG]...
#                        [-x "OK_CODES"] -- GENERATOR [ARG...]
#
#   -C DIR        the repository (default: .); the generator runs there
#   -b BRANCH     the branch to commit on, created from HEAD if missing (default: bot/fixups)
#   -m MESSAGE    the commit message (default: "Automated fixups: GENERATOR ARG...")
#   -o REPORT     where the markdown report goes (default: $RUNNER_TEMP, else $TMPDIR, else /tmp,
#                 /patchgate-fixups.md); keep it outside the repository
#   -a ARG        one more argument for `patchgate apply` (repeatable), e.g. -a --checks=none
#   -x CODES      the generator's exit codes that mean success (default: "0 1": ruff exits 1 when
#                 it has something to fix)
#   PATCHGATE     environment: the patchgate binary (default: patchgate on PATH)
#
# Exit status:
#   0   nothing to fix (no branch, no report), or the fixups are committed on BRANCH
#   1   the checks failed on the fixed state            } nothing committed;
#   2   a hunk did not apply (the tree moved on)        } the report says why
#   3   the generator's diff is not a valid patch       }
#   4   environment: not a repository, BRANCH moved, … }
#   5   the generator failed
#   64  usage
#
# In GitHub Actions ($GITHUB_OUTPUT set) it also writes the step outputs `changed` (true/false),
# `branch` and `report` (the report's path, empty when there is none).
set -euo pipefail

dir=.
branch=bot/fixups
message=
report="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/patchgate-fixups.md"
ok_codes="0 1"
extra=()
patchgate="${PATCHGATE:-patchgate}"

usage() {
  sed -n '6,7p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 64
}

while getopts "C:b:m:o:a:x:h" opt; do
  case "$opt" in
    C) dir=$OPTARG ;;
    b) branch=$OPTARG ;;
    m) message=$OPTARG ;;
    o) report=$OPTARG ;;
    a) extra+=("$OPTARG") ;;
    x) ok_codes=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ "$#" -gt 0 ] || usage
[ -n "$message" ] || message="Automated fixups: $*"

output() {
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    printf '%s=%s\n' "$1" "$2" >> "$GITHUB_OUTPUT"
  fi
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -f "$report"

# The generator writes the diff on stdout; its stderr stays visible in the job log.
set +e
(cd "$dir" && "$@") > "$work/fixups.diff"
status=$?
set -e
case " $ok_codes " in
  *" $status "*) ;;
  *)
    echo "apply-fixups: the generator \`$*\` failed (exit $status)" >&2
    output changed false
    output report ""
    exit 5
    ;;
esac

if ! grep -q '^@@ ' "$work/fixups.diff"; then
  echo "apply-fixups: nothing to fix"
  output changed false
  output report ""
  exit 0
fi

set +e
"$patchgate" apply - -C "$dir" --input diff --branch "$branch" -m "$message" \
  --format markdown ${extra[@]+"${extra[@]}"} < "$work/fixups.diff" > "$report"
status=$?
set -e
output report "$report"
output branch "$branch"
if [ "$status" -eq 0 ]; then
  echo "apply-fixups: fixups committed on $branch (report: $report)"
  output changed true
else
  echo "apply-fixups: nothing committed, patchgate exited $status (report: $report)" >&2
  output changed false
fi
exit "$status"
