# Sourced by .ci/run: names CI's stages, runs some of them beside others, and prints the table of every
# stage (when it started, its wall time, the CPU time of its processes, its result) when the run ends,
# passing or failing.
#
#   stage "swift test"                      # ends the stage before it and starts this one, in this shell
#   swift test
#   stage_end                               # optional: the next `stage` or the end of the run ends it too
#
#   stage_background "fuzz build" fuzz_build   # runs the function fuzz_build beside what follows, its
#   ...                                        # output kept in a file
#   stage_wait "fuzz build"                    # waits for it, prints its output, fails the run if it failed
#
# A command that fails under `set -e` ends the run: the EXIT trap marks the stage it was in as failed,
# stops the stages still running in the background, and prints the table so far.

ci_started=$(date +%s)
stage_names=()
stage_starts=()
stage_walls=()
stage_cpus=()
stage_results=()
stage_current=""
stage_current_started=0
stage_current_cpu=0
declare -A background_pids=() background_logs=() background_started=()

# The CPU time (user + system, in clock ticks) of every finished, waited-for child of process $1 (this
# shell by default): fields 16 and 17 of /proc/PID/stat. ($$ is this shell even inside $(...), where the
# `times` builtin would report the subshell's own children.)
clock_ticks=$(getconf CLK_TCK)
children_cpu() {
  awk '{ sub(/^.*\) /, ""); printf "%d", $14 + $15 }' "/proc/${1:-$$}/stat"
}
# Clock ticks as whole seconds, rounded.
seconds() { [ -n "$1" ] && echo $(( ($1 + clock_ticks / 2) / clock_ticks )); }

stage_record() { # name start wall cpu result
  stage_names+=("$1")
  stage_starts+=("$2")
  stage_walls+=("$3")
  stage_cpus+=("$4")
  stage_results+=("$5")
}

stage_end() {
  if [ -n "$stage_current" ]; then
    stage_record "$stage_current" $(( stage_current_started - ci_started )) $(( $(date +%s) - stage_current_started )) \
      $(( $(children_cpu) - stage_current_cpu )) ok
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

# stage_background NAME COMMAND [ARGUMENTS...]: runs COMMAND (a function or a program) under `set -e` in
# a subshell of its own process group, beside whatever this shell does next; its output goes to a file
# that stage_wait prints.
stage_background() {
  local name=$1 log
  shift
  log=$(mktemp "${TMPDIR:-/tmp}/ci-stage.XXXXXX")
  background_started[$name]=$(date +%s)
  background_logs[$name]=$log
  set -m
  (
    trap - EXIT
    set +e
    subshell=$BASHPID
    ( set -e; "$@" ) </dev/null >"$log" 2>&1
    status=$?
    echo "$(date +%s) $(children_cpu "$subshell")" >"$log.end"
    exit "$status"
  ) &
  background_pids[$name]=$!
  set +m
  echo
  echo "=== stage: $name   ($(( background_started[$name] - ci_started )) s into the run, in the background: output when it ends)"
}

# stage_wait NAME: waits for a stage started by stage_background, prints its output and records it; a
# failed stage ends the run with its status.
stage_wait() {
  local name=$1 status=0 ended cpu
  wait "${background_pids[$name]}" || status=$?
  unset "background_pids[$name]"
  read -r ended cpu <"${background_logs[$name]}.end" || { ended=$(date +%s); cpu=0; }
  # Reaped now, its CPU joins this shell's children: it is the background stage's, not the current one's.
  stage_current_cpu=$(( stage_current_cpu + cpu ))
  echo
  echo "=== stage: $name, ended $(( ended - ci_started )) s into the run; its output:"
  cat "${background_logs[$name]}"
  rm -f "${background_logs[$name]}" "${background_logs[$name]}.end"
  local result=ok
  [ "$status" -ne 0 ] && result="FAILED (exit $status)"
  stage_record "$name" $(( background_started[$name] - ci_started )) $(( ended - background_started[$name] )) "$cpu" "$result"
  if [ "$status" -ne 0 ]; then
    echo ".ci/run: stage '$name' failed (exit $status)" >&2
    stage_end
    exit "$status"
  fi
}

stage_table() {
  local status=$1 index total
  total=$(( $(date +%s) - ci_started ))
  echo
  echo "CI stages (budget: 2,400 s of the 90 minutes allowed; see the header of .ci/run)"
  printf '%-52s %7s %7s %7s  %s\n' "stage" "start s" "wall s" "CPU s" "result"
  for index in "${!stage_names[@]}"; do
    printf '%-52s %7d %7d %7s  %s\n' "${stage_names[$index]}" "${stage_starts[$index]}" "${stage_walls[$index]}" \
      "$(seconds "${stage_cpus[$index]}")" "${stage_results[$index]}"
  done
  printf '%-52s %7s %7d %7s  %s\n' "total" "" "$total" "$(seconds "$(children_cpu)")" \
    "$([ "$status" -eq 0 ] && echo passed || echo "FAILED (exit $status)")"
  if [ "$total" -gt 2400 ]; then
    echo "warning: CI took $total s, over its budget of 2,400 s (see the header of .ci/run)"
  fi
}

stage_on_exit() {
  local status=$? name pid
  set +e
  if [ -n "$stage_current" ]; then
    local result=ok
    [ "$status" -ne 0 ] && result="FAILED (exit $status)"
    stage_record "$stage_current" $(( stage_current_started - ci_started )) $(( $(date +%s) - stage_current_started )) \
      $(( $(children_cpu) - stage_current_cpu )) "$result"
    stage_current=""
  fi
  # Stages still running in the background when the run ends (because another failed): stop them. A
  # run that ends with one still running has forgotten to wait for it, and fails.
  [ "$status" -eq 0 ] && [ ${#background_pids[@]} -gt 0 ] && status=1
  for name in "${!background_pids[@]}"; do
    pid=${background_pids[$name]}
    kill -TERM -- "-$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    stage_record "$name" $(( background_started[$name] - ci_started )) $(( $(date +%s) - background_started[$name] )) "" \
      "stopped: the run ended"
    echo "=== stage: $name was stopped; its output so far:"
    tail -n 40 "${background_logs[$name]}"
  done
  stage_table "$status"
  exit "$status"
}
trap stage_on_exit EXIT
