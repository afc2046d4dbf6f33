# Shared by the example scripts of the petsc suite (pc_ex.sh, pc_ex56.sh), sourced: Open MPI as
# root and oversubscribed, and the one-line verdicts they count.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
fails=0 runs=0
# verdict NAME RESULT...: "ok  NAME" when RESULT is ok, else "BAD NAME: RESULT" and the tail of
# $out; counted in runs and fails.
verdict() {
  runs=$((runs + 1))
  local name=$1
  shift
  if [ "$1" = ok ]; then
    echo "ok  $name"
  else
    fails=$((fails + 1))
    echo "BAD $name: $*"
    [ -n "${out:-}" ] && echo "$out" | tail -15 | sed 's/^/     /'
  fi
}
