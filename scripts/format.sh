#!/usr/bin/env bash
# Formats every tracked C++ and CUDA source (*.cpp *.hpp *.cu *.cuh, as git
# ls-files lists them, so build folders are never touched) in place, with
# clang-format 14 and the repository's .clang-format. With --check it
# changes nothing: it lists the files that are not formatted, one a line,
# and exits 1 if there are any (scripts/test.sh's format stage).
#
# clang-format 14 only: another version formats the same style differently,
# so the check would fail on code formatted here. Debian 12's clang-format-14
# package (scripts/install-deps.sh --test installs it); a `clang-format`
# whose --version says 14 does as well.
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
case ${1:-} in
  '') ;;
  --check) check=1 ;;
  *) echo "usage: scripts/format.sh [--check]" >&2; exit 2 ;;
esac
(($# <= 1)) || { echo "usage: scripts/format.sh [--check]" >&2; exit 2; }

is_14() { [[ $("$1" --version 2>/dev/null) =~ version\ 14\. ]]; }
formatter=
for candidate in clang-format-14 clang-format; do
  if command -v "$candidate" >/dev/null 2>&1 && is_14 "$candidate"; then
    formatter=$(command -v "$candidate")
    break
  fi
done
if [[ -z $formatter ]]; then
  found=$(command -v clang-format 2>/dev/null || true)
  echo "format.sh: needs clang-format 14 (Debian 12's clang-format-14 package:" \
       "scripts/install-deps.sh --test installs it)${found:+; $found is $("$found" --version 2>/dev/null | head -n 1)}" >&2
  exit 2
fi
if [[ ! -f .clang-format ]]; then
  echo "format.sh: no .clang-format at the repository's root" >&2
  exit 2
fi

# The file list is git's: fail here, with git's message, where git cannot
# read this checkout.
git rev-parse --git-dir >/dev/null

# Tracked sources that exist in the work tree (a deletion not yet committed
# is still listed), NUL-separated.
sources() {
  git ls-files -z -- '*.cpp' '*.hpp' '*.cu' '*.cuh' |
    while IFS= read -r -d '' f; do
      if [[ -f $f ]]; then printf '%s\0' "$f"; fi
    done
}
jobs=$(nproc 2>/dev/null || echo 2)

if ((check == 0)); then
  sources | xargs -0 -r -n 16 -P "$jobs" "$formatter" --style=file -i
  exit 0
fi

# clang-format --dry-run warns once a file (--ferror-limit=1) for each file
# it would change, "FILE:LINE:COLUMN: warning: code should be
# clang-formatted [-Wclang-format-violations]". Each batch of files writes
# its messages to a file of its own, so that parallel batches do not mix
# their lines.
shopt -s nullglob
messages=$(mktemp -d)
trap 'rm -rf "$messages"' EXIT
export formatter messages
# shellcheck disable=SC2016 # $formatter and $messages are the inner shell's
if ! sources | xargs -0 -r -n 16 -P "$jobs" bash -c \
    '"$formatter" --style=file --dry-run --ferror-limit=1 "$@" 2>"$(mktemp "$messages/XXXXXX")"' \
    format.sh; then
  cat /dev/null "$messages"/* >&2
  echo "format.sh: $formatter failed" >&2
  exit 2
fi
unformatted=$(cat /dev/null "$messages"/* |
  sed -n 's/:[0-9]*:[0-9]*: warning: code should be clang-formatted \[-Wclang-format-violations\]$//p' |
  LC_ALL=C sort -u)
if [[ -n $unformatted ]]; then
  printf '%s\n' "$unformatted"
  count=$(wc -l <<<"$unformatted")
  echo "format.sh: $count $( ((count == 1)) && echo file || echo files) not formatted;" \
       "scripts/format.sh fixes them" >&2
  exit 1
fi
