# Stage timing for scripts/test.sh, scripts/fuzz.sh and .ci/run (sourced, not run).
#
#   stage NAME COMMAND [ARGS...]   runs COMMAND and appends "NAME wall cpu status" to
#                                  $HSDP_STAGE_LOG (wall-clock and CPU seconds: user + system
#                                  of every process the command started); returns its status
#   stage_report [NAME SHARE]...   prints the stages' times (a stage run twice is summed) and,
#                                  for each NAME given, checks the stage against SHARE seconds
#                                  of the budget; only warns (returns 0)
#
# The check, on a machine shared with other builds: a stage's wall time depends on the load,
# its CPU time much less. With `cores` cores, a stage that used C CPU seconds needs at least
# C / cores seconds even on an idle machine; when that passes its share the stage is over
# budget whatever the load: "WARNING: over its share even on idle cores". When only the wall
# time passes the share, the machine may have been busy: a WARNING with the load average.
# Both only warn (README.md, CI): a noisy shared machine must not fail CI on timing.
HSDP_STAGE_LOG=${HSDP_STAGE_LOG:-}

_stage_cpu() {  # CPU seconds of the finished children of this shell, from `times` in $1
  awk 'NR == 2 {
    total = 0
    for (i = 1; i <= 2; ++i) { split($i, p, "m"); sub("s", "", p[2]); total += p[1] * 60 + p[2] }
    printf "%.1f", total
  }' "$1"
}

stage() {
  local name=$1
  shift
  [[ -n "$HSDP_STAGE_LOG" ]] || HSDP_STAGE_LOG=$(mktemp "${TMPDIR:-/tmp}/hsdp-stages.XXXXXX")
  local times_file start cpu0 cpu1 status=0
  times_file=$(mktemp "${TMPDIR:-/tmp}/hsdp-times.XXXXXX")
  # `times` in this shell (not in a $(...) subshell, which has no children of its own).
  times >"$times_file"
  cpu0=$(_stage_cpu "$times_file")
  start=$EPOCHREALTIME
  echo "== stage $name: $*"
  "$@" || status=$?
  times >"$times_file"
  cpu1=$(_stage_cpu "$times_file")
  rm -f "$times_file"
  awk -v n="$name" -v s="$start" -v e="$EPOCHREALTIME" -v c0="$cpu0" -v c1="$cpu1" -v st="$status" \
    'BEGIN { printf "%s %.1f %.1f %d\n", n, e - s, c1 - c0, st }' >>"$HSDP_STAGE_LOG"
  return "$status"
}

stage_report() {
  [[ -n "$HSDP_STAGE_LOG" && -s "$HSDP_STAGE_LOG" ]] || return 0
  local cores
  cores=$(nproc)
  awk -v cores="$cores" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" -v shares="$*" '
    { if (!($1 in wall)) order[++n] = $1; wall[$1] += $2; cpu[$1] += $3; if ($4 != 0) failed[$1] = 1 }
    END {
      m = split(shares, s, " ")
      for (i = 1; i + 1 <= m; i += 2) { share[s[i]] = s[i + 1]; budget += s[i + 1] }
      printf "\nCI stage times (%d cores; load average now %s)\n", cores, load
      printf "  %-16s %8s %8s %8s  %s\n", "stage", "wall s", "cpu s", "share s", "check"
      bad = 0
      for (i = 1; i <= n; ++i) {
        k = order[i]; check = "ok"
        if (k in share) {
          if (cpu[k] / cores > share[k]) { check = "WARNING: over its share even on idle cores"; bad = 1 }
          else if (wall[k] > share[k]) check = "WARNING: wall time over its share (busy machine?)"
        } else check = "(no share)"
        if (failed[k]) check = check " [stage exited non-zero]"
        printf "  %-16s %8.0f %8.0f %8s  %s\n", k, wall[k], cpu[k], ((k in share) ? share[k] : "-"), check
        tw += wall[k]; tc += cpu[k]
      }
      check = "ok"
      if (budget > 0) {
        if (tc / cores > budget) { check = "WARNING: over the budget even on idle cores"; bad = 1 }
        else if (tw > budget) check = "WARNING: wall time over the budget (busy machine?)"
      }
      printf "  %-16s %8.0f %8.0f %8s  %s\n", "total", tw, tc, (budget > 0 ? budget : "-"), check
      for (i = 1; i <= n; ++i) { k = order[i]; if ((k in share) && wall[k] > share[k]) warned = 1 }
      if (warned || (budget > 0 && tw > budget)) printf "\n!!! WARNING: a CI stage took longer than its share of the budget (README.md, CI) !!!\n"
      if (bad) printf "\n!!! WARNING: a CI stage needs more CPU than its share allows on %d cores (README.md, CI) !!!\n", cores
      exit 0
    }' "$HSDP_STAGE_LOG"
}
