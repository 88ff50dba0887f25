#!/usr/bin/env bash
# check-layers: the layer rules of docs/architecture.md, read from the include
# lines of the sources.  `make check-layers` runs it (and `make test` does).
#   tests/check-layers.sh [ROOT [OBJDIR]]   ROOT: a checkout (default: this one);
#                                           OBJDIR: its objects (default ROOT/build/release)
# Prints one line per broken rule, naming the file, line and include
# ("sim/engine/evq.c:12: engine may not include run (run/sim.h)"), and exits 1;
# prints "check-layers: N files, E includes, no back edge, no cycle" and exits 0.
#
# Folders and what each may include (besides its own folder):
#   sim/engine    nothing (libc, GSL)
#   sim/core      engine
#   sim/fleet     engine core
#   sim/workload  engine core
#   sim/stations, sim/gateway, sim/llm (the kinds)   engine core fleet
#   sim/run       engine core fleet workload, and the kinds except in
#                 scenario assembly (run/scenario.[ch], run/scn*.[ch])
#   sim/report    everything in sim below it
#   sim/store     everything in sim below it, and report
#   sim/plan      everything in sim below it (the planner's computations)
#   calib         sim (never the other way)
#   include       (public headers, include/latsim/*.h) only each other, and
#                 system and library headers: never sim/, calib/ or cli/
#   cli           include/latsim and calib's public header (calib/calib.h) only
# Every folder of sim/ and calib/ may include the public headers (an internal
# header includes the public one it completes, as SQLite's sqliteInt.h
# includes sqlite3.h); a public header may include no internal one.
# Routing policies (core/route.c, core/route.h) see the snapshot interface
# (core/snap.h), the request record and the complexity classifier only (and
# the table of rows, engine/rowtab.h, their registry).
# Cycles: no two modules (a .c and its .h) and no two folders include each
# other, directly or through others.  Link level: when the objects are built
# (OBJDIR), a module that calls a function defined in another module is an
# edge too (nm): the same folder rules hold for those edges, and they may not
# close a cycle between folders.  Inside a folder, a table of rows may name
# the rows' files while they call its functions (the scheduler table and its
# rows): module cycles are counted on the include lines only.
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2

declare -A ALLOW=(
  [engine]="public"
  [core]="engine public"
  [fleet]="engine core public"
  [workload]="engine core public"
  [stations]="engine core fleet public"
  [gateway]="engine core fleet public"
  [llm]="engine core fleet public"
  [run]="engine core fleet workload stations gateway llm public"
  [report]="engine core fleet workload stations gateway llm run public"
  [store]="engine core fleet workload stations gateway llm run report public"
  [plan]="engine core fleet workload stations gateway llm run report store public"
  [calib]="engine core fleet workload stations gateway llm run report store public"
  [public]=""
  [cli]="public calibpub"
)
KINDS="stations gateway llm"
ROUTE_ALLOW="engine/request.h engine/simtime.h engine/evq.h engine/rng.h core/snap.h core/cplx.h core/route.h engine/rowtab.h"

# folder_of PATH -> the layer name of a source path, in $REPLY (no subshell: the
# link edges call it thousands of times)
folder_of() {
  case $1 in
    sim/*/*) REPLY=${1#sim/}; REPLY=${REPLY%%/*} ;;
    include/latsim/*) REPLY=public ;;
    calib/*) REPLY=calib ;;
    cli/*) REPLY=cli ;;
    *) REPLY=other ;;
  esac
}

# resolve FROM INCLUDE -> the path it names (sim/X/Y.h, include/latsim/Y.h, calib/Y.h, cli/Y.h),
# or "", in $REPLY
resolve() {
  local from=$1 inc=$2 dir=${1%/*}
  REPLY=
  case $inc in
    latsim/*) [ -f "include/$inc" ] && { REPLY="include/$inc"; return; } ;;
    */*) [ -f "sim/$inc" ] && { REPLY="sim/$inc"; return; } ;;
  esac
  [ -f "$dir/$inc" ] && { REPLY="$dir/$inc"; return; }
  for d in calib cli; do [ -f "$d/$inc" ] && { REPLY="$d/$inc"; return; }; done
}

fail=0; nfiles=0; nedges=0
mods=$(mktemp); dirs=$(mktemp)
files=$(ls sim/*/*.[ch] calib/*.[ch] cli/*.[ch] include/latsim/*.h 2>/dev/null)
for f in $files; do
  nfiles=$((nfiles + 1))
  folder_of "$f"; from=$REPLY
  mod=${f%.[ch]}
  echo "$mod $mod" >>"$mods"
  while IFS=: read -r line inc; do
    inc=${inc#*\"}; inc=${inc%\"*}
    resolve "$f" "$inc"; to_path=$REPLY
    [ -z "$to_path" ] && continue          # a system header
    nedges=$((nedges + 1))
    folder_of "$to_path"; to=$REPLY
    to_mod=${to_path%.[ch]}
    [ "$to_mod" != "$mod" ] && echo "$mod $to_mod" >>"$mods"
    if [ "$to" = calib ] && [ "$from" = cli ]; then
      [ "$to_path" = calib/calib.h ] && to=calibpub
    fi
    [ "$to" != "$from" ] && echo "$from $to" >>"$dirs"
    if [ "$to" != "$from" ] && ! [[ " ${ALLOW[$from]:-} " == *" $to "* ]]; then
      echo "$f:$line: $from may not include $to ($inc)"; fail=1
    fi
    case $f in
      sim/run/scenario.[ch]|sim/run/scn*.[ch])
        if [[ " $KINDS " == *" $to "* ]]; then
          echo "$f:$line: scenario assembly may not include a kind's folder ($inc): use the kind row's hooks"; fail=1
        fi ;;
      sim/core/route.[ch])
        if ! [[ " $ROUTE_ALLOW " == *" ${to_path#sim/} "* ]]; then
          echo "$f:$line: a routing policy sees snapshots and the request only, not $inc"; fail=1
        fi ;;
    esac
  done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
done

# Cycles: tsort names a loop on stderr.
cyc() {   # cyc FILE WHAT: one line per loop, "module cycle: a -> b -> c -> a"
  local out
  out=$(sort -u "$1" | tsort 2>&1 >/dev/null)
  [ -z "$out" ] && return 0
  echo "$out" | awk -v what="$2" '
    /input contains a loop/ { if (n) print what " cycle: " path " -> " first; n = 0; next }
    { sub(/^tsort: /, ""); if (n++) path = path " -> " $0; else { path = $0; first = $0 } }
    END { if (n) print what " cycle: " path " -> " first }'
  return 1
}
# Link-level edges: module A uses a symbol module B defines.
objdir=${2:-build/release}
links=$(mktemp); trap 'rm -f "$mods" "$dirs" "$links" "$links.d" "$links.u"' EXIT
if [ -d "$objdir/sim" ] && command -v nm >/dev/null; then
  : >"$links.d"; : >"$links.u"
  objs=()
  for o in $(find "$objdir/sim" "$objdir/calib" -name '*.o' 2>/dev/null); do
    m=${o#"$objdir"/}; m=${m%.o}
    [ -f "$m.c" ] && objs+=("$o")
  done
  # One nm over all the objects (-A: each line "OBJECT:..."; one process per object
  # took most of this script's time): "SYMBOL MODULE" lines.
  if [ ${#objs[@]} -gt 0 ]; then
    nm -A -g --defined-only "${objs[@]}" 2>/dev/null | awk -v od="$objdir/" '
      { i = index($0, ":"); m = substr($0, length(od) + 1, i - length(od) - 1); sub(/\.o$/, "", m)
        if (split(substr($0, i + 1), a, " ") >= 3 && a[2] ~ /^[TDBR]$/) print a[3], m }' >>"$links.d"
    nm -A -u "${objs[@]}" 2>/dev/null | awk -v od="$objdir/" '
      { i = index($0, ":"); m = substr($0, length(od) + 1, i - length(od) - 1); sub(/\.o$/, "", m)
        split(substr($0, i + 1), a, " "); print a[2], m }' >>"$links.u"
  fi
  sort -u "$links.d" -o "$links.d"; sort -u "$links.u" -o "$links.u"
  join "$links.u" "$links.d" | awk '$2 != $3 {print $2, $3, $1}' | sort -u -k1,2 >"$links"
  while read -r from_m to_m sym; do
    folder_of "$from_m.c"; from=$REPLY; folder_of "$to_m.c"; to=$REPLY
    [ "$to" != "$from" ] && echo "$from $to" >>"$dirs"
    if [ "$to" != "$from" ] && ! [[ " ${ALLOW[$from]:-} " == *" $to "* ]]; then
      echo "$from_m.c: $from may not call $to ($sym, defined in $to_m.c)"; fail=1
    fi
  done <"$links"
fi
cyc "$mods" "module" || fail=1
cyc "$dirs" "folder" || fail=1
if [ $fail = 0 ]; then
  echo "check-layers: $nfiles files, $nedges includes, no back edge, no cycle"
fi
exit $fail
