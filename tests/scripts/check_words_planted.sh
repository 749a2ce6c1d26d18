#!/usr/bin/env bash
# scripts/check-words fails on a line that refers to how the project was made, names the file and
# line, and passes the same file once the line says what the software does.
# Usage: check_words_planted.sh <source_dir> <scratch_dir>
set -uo pipefail
src=$1
dir=$2/check_words
mkdir -p "$dir"
planted=$dir/planted.cpp
fail() { echo "check_words_planted: $*" >&2; exit 1; }

# (the planted words are put together from pieces, so that this file passes the check itself)
for line in "// as measured in sto""p 27" "// the result of iss""ue 9" "// the go""al: 20x" \
            "// the se""ed's BFS story" "// to be finished next ses""sion" "// while len""ding was paused"; do
  printf 'int f();\n%s\nint g();\n' "$line" > "$planted"
  out=$("$src/scripts/check-words" "$planted" 2>&1)
  rc=$?
  [ $rc -eq 1 ] || fail "exit $rc (expected 1) on the planted line '$line'"
  case $out in *"planted.cpp:2:"*) ;; *) fail "the output does not name planted.cpp:2 for '$line': $out" ;; esac
done

# What the software does passes, CUPTI's and the trace's sessions and a random seed included.
printf '%s\n' "// the range profiler's session counts the children's work" \
  "// a trace_session turns tracing on" "// the generator's seed (default 1)" \
  "// the stream stops when the budget is spent" > "$planted"
"$src/scripts/check-words" "$planted" || fail "a clean file failed the check"
echo "check_words_planted: ok"
