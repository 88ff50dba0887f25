#!/usr/bin/env bash
# layout.sh -- the Layout table of docs/architecture.md, generated from each
# source file's first comment.
#   tests/layout.sh [ROOT]           prints the table as it should be
#   tests/layout.sh --check [ROOT]   exit 1 (and a diff) when the document's differs
#   tests/layout.sh --write [ROOT]   rewrites the document's table (`make docs-update`)
#
# A folder row (a path ending in '/') is written by hand and kept as it is: what
# the folder is for and what it may include.  Under each folder of sources
# (sim/*/, calib/, cli/, include/latsim/) the file rows are generated: a file's
# text is the first sentence of its first comment, after "NAME -- " (for
# `X.[ch]`, the header's; a paragraph of the .c's first comment that starts
# "Size:" is added in parentheses: why a long file is one file).  Files keep the
# table's order; a new file goes at the end of its folder, a removed one goes.
# A folder of sources with no row of its own is an error (write its row first).
set -uo pipefail
mode=print
case "${1:-}" in --check|--write) mode=${1#--}; shift;; esac
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
doc=docs/architecture.md
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# The first sentence of FILE's first comment (C or shell): up to a single period
# before a capital or the end, a blank line or an indented block; past 300
# characters, up to the last separator before them (", ..."); '|' escaped for
# the table.
first_sentence() {
  awk '
    NR == 1 && /^#!/ { next }
    !started { if ($0 !~ /^[ \t]*(\/\*|#)/) next; started = 1; shell = $0 ~ /^[ \t]*#/
               sub(/^[ \t]*(\/\*|#)[ \t]*/, ""); sub(/^[^ ]+ -- /, "") }
    started && seen { if (shell) { if ($0 !~ /^[ \t]*#/) exit; sub(/^[ \t]*#[ \t]?/, "") }
                      else sub(/^[ \t]*\*?[ \t]?/, "")
                      if ($0 ~ /^  /) exit }   # an indented block (a listing) ends the text
    started { seen = 1; end = sub(/\*\/.*$/, ""); gsub(/[ \t]+$/, "")
              if ($0 == "" && text != "") exit
              text = text (text == "" ? "" : " ") $0; if (end) exit }
    END { n = match(text, /[^.]\.( +[A-Z(`"]|$)/); if (n) text = substr(text, 1, n)   # a sentence ends at one period
          sub(/[:;,]$/, "", text)
          if (length(text) > MAX) {   # cut at the last separator outside parentheses before MAX
            depth = 0; cut = 0
            for (i = 1; i < MAX; i++) { c = substr(text, i, 1)
              if (c == "(") depth++; else if (c == ")") depth--
              else if (depth == 0 && (c == ";" || c == "," || c == ":") && substr(text, i + 1, 1) == " ") cut = i }
            if (cut) text = substr(text, 1, cut - 1) " ..."
          }
          gsub(/\|/, "\\|", text); print text }' MAX=300 "$1"
}

# The "Size:" paragraph of a C file's first comment, or nothing.
size_note() {
  awk '
    NR == 1 { if ($0 !~ /^\/\*/) exit }
    { end = sub(/\*\/.*$/, ""); sub(/^(\/\*|[ \t]*\*)[ \t]?/, ""); gsub(/[ \t]+$/, "") }
    $0 ~ /^Size:/ { on = 1; sub(/^Size:[ \t]*/, "") }
    on && $0 == "" { exit }
    on { text = text (text == "" ? "" : " ") $0 }
    end { exit }
    END { sub(/\.$/, "", text); gsub(/\|/, "\\|", text); print text }' "$1"
}

# Every source file of the generated folders, and its row's text.
for f in sim/*/*.[ch] calib/*.[ch] calib/*.cu calib/*.sh cli/*.[ch] include/latsim/*.h; do
  [ -f "$f" ] || continue
  case "$f" in *.c) [ -f "${f%.c}.h" ] && continue;; esac   # the pair's row is the header's
  path=$f text=$(first_sentence "$f")
  if [ "${f##*.}" = h ] && [ -f "${f%.h}.c" ]; then
    path=${f%.h}.[ch]
    note=$(size_note "${f%.h}.c")
    [ -n "$note" ] && text="$text ($note)"
  fi
  printf '%s\t%s\t%s\n' "$(dirname "$f")/" "$path" "$text"
done > "$tmp/files"

# The table: the document's rows in order, each folder's file rows regenerated.
awk -F'\t' -v doc="$doc" '
  FNR == NR { dir[NR] = $1; path[NR] = $2; text[NR] = $3; nf = NR; indir[$1] = 1; next }
  function flush(   i) {   # the files of folder CUR not listed yet, in name order
    for (i = 1; i <= nf; i++)
      if (dir[i] == cur && !done[path[i]]) { printf "| `%s` | %s |\n", path[i], text[i]; done[path[i]] = 1 }
  }
  /^## Layout/ { in_sec = 1 }
  in_sec && /^\|---/ { in_tab = 1; next }
  in_tab && !/^\| `/ { flush(); in_tab = 0; in_sec = 0 }
  !in_tab { next }
  {
    p = $0; sub(/^\| `/, "", p); sub(/`.*/, "", p)
    if (p ~ /\/$/) { flush(); cur = p; seen_dir[p] = 1; print; next }
    for (i = 1; i <= nf; i++)
      if (path[i] == p && !done[p]) { printf "| `%s` | %s |\n", p, text[i]; done[p] = 1 }
  }
  END {
    for (d in indir) if (!(d in seen_dir)) { print "layout: folder " d " has no row in " doc ": write one" > "/dev/stderr"; bad = 1 }
    exit bad
  }' "$tmp/files" "$doc" > "$tmp/table" || exit 1

# The document's own table, and the document with the generated one.
awk '/^## Layout/ { s = 1 } s && /^\|---/ { t = 1; next } t && !/^\| `/ { exit } t' "$doc" > "$tmp/have"
case $mode in
  print) cat "$tmp/table";;
  check)
    if ! diff -u "$tmp/have" "$tmp/table" > "$tmp/diff"; then
      echo "layout: the Layout table of $doc differs from the sources' first comments (make docs-update rewrites it):"
      cat "$tmp/diff"
      exit 1
    fi
    echo "layout: $(wc -l < "$tmp/table") rows, as the sources say";;
  write)
    awk -v table="$tmp/table" '
      /^## Layout/ { s = 1 }
      s && /^\|---/ { print; while ((getline l < table) > 0) print l; t = 1; next }
      t && /^\| `/ { next }
      t { t = 0; s = 0 }
      { print }' "$doc" > "$tmp/doc" && cat "$tmp/doc" > "$doc";;
esac
