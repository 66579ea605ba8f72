# Owns what the smoke scripts share (sourced, not run): the source tree they prove.
# Needs ROOT_DIR and a log function from the script that sources it.

# source_tree DIR WHAT: with SMOKE_SOURCE=head, the last commit's files extracted into DIR (logged as
# "WHAT the last commit ..."); otherwise the working tree. Prints the tree's path.
source_tree() {
  if [[ "${SMOKE_SOURCE:-}" == head ]]; then
    mkdir -p "$1"
    git -C "$ROOT_DIR" archive HEAD | tar -x -C "$1"
    log "$2 the last commit $(git -C "$ROOT_DIR" rev-parse --short HEAD)" >&2
    printf '%s' "$1"
  else
    printf '%s' "$ROOT_DIR"
  fi
}
