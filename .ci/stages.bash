# Sourced by .ci/run: names CI's stages and prints their table (wall time, CPU time of the stage's
# processes, result) when the run ends, passing or failing.
#
#   stage "debug build (warnings as errors)"     # ends the stage before it, starts this one
#   ...commands...
#   stage_end                                    # optional: the next `stage` or the exit ends it too
#
# A command that fails under `set -e` ends the run: the EXIT trap marks the stage it was in as failed
# and prints the table so far. Stages that run beside each other are started with `stage_background`
# and collected with `stage_wait` (see .ci/run).

ci_started=$(date +%s)
stage_names=()
stage_walls=()
stage_cpus=()
stage_results=()
stage_current=""
stage_current_started=0
stage_current_cpu=0

# The CPU seconds (user + system) of every finished child of this shell so far.
children_cpu() {
  local line
  line=$(times | tail -n 1)
  # "0m1.234s 0m0.567s": minutes and seconds, user then system.
  awk '{ total = 0; for (i = 1; i <= 2; i++) { split($i, part, "m"); sub("s", "", part[2]); total += part[1] * 60 + part[2] } printf "%d", total }' <<<"$line"
}

stage_record() { # name wall cpu result
  stage_names+=("$1")
  stage_walls+=("$2")
  stage_cpus+=("$3")
  stage_results+=("$4")
}

stage_end() {
  if [ -n "$stage_current" ]; then
    stage_record "$stage_current" $(( $(date +%s) - stage_current_started )) $(( $(children_cpu) - stage_current_cpu )) ok
    stage_current=""
  fi
}

stage() {
  stage_end
  stage_current=$1
  stage_current_started=$(date +%s)
  stage_current_cpu=$(children_cpu)
  echo
  echo "=== stage: $1   ($(( stage_current_started - ci_started )) s into the run)"
}

stage_table() {
  local status=$1 index total
  total=$(( $(date +%s) - ci_started ))
  echo
  echo "CI stages (budget: 2,400 s of the 90 minutes; see the header of .ci/run)"
  printf '%-58s %7s %7s  %s\n' "stage" "wall s" "CPU s" "result"
  for index in "${!stage_names[@]}"; do
    printf '%-58s %7d %7s  %s\n' "${stage_names[$index]}" "${stage_walls[$index]}" "${stage_cpus[$index]}" "${stage_results[$index]}"
  done
  printf '%-58s %7d %7s  %s\n' "total" "$total" "" "$([ "$status" -eq 0 ] && echo passed || echo "FAILED (exit $status)")"
  if [ "$status" -eq 0 ] && [ "$total" -gt 2400 ]; then
    echo "warning: CI took $total s, over its budget of 2,400 s (see the header of .ci/run)"
  fi
}

stage_on_exit() {
  local status=$?
  set +e
  if [ -n "$stage_current" ]; then
    local result=ok
    [ "$status" -ne 0 ] && result="FAILED (exit $status)"
    stage_record "$stage_current" $(( $(date +%s) - stage_current_started )) $(( $(children_cpu) - stage_current_cpu )) "$result"
    stage_current=""
  fi
  stage_table "$status"
  exit "$status"
}
trap stage_on_exit EXIT
