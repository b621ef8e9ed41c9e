# Bash completion for sample-record, sample-report and sample-top, installed
# (meson install) as share/bash-completion/completions/<program> for each.
# Options come from the program's own --help, so they never fall behind it;
# -e completes event names from sample-record --list-events (tracepoints
# once the word has a ':', which the listing needs as a glob).

# The options PROGRAM's --help lists, one per line: its lines read
# "  -F, --freq <n>  help", "      --call-graph <mode>  help", "  -g  help".
_sample_options() {
  "$1" --help 2>/dev/null |
    sed -n -e 's/^  \(-[A-Za-z]\), \(--[a-z0-9-]*\).*/\1\n\2/p' \
      -e 's/^      \(--[a-z0-9-]*\).*/\1/p' -e 's/^  \(-[A-Za-z]\)  .*/\1/p'
}

# The options of PROGRAM that take a value (their --help line says "<value>").
_sample_value_options() {
  "$1" --help 2>/dev/null |
    sed -n -e 's/^  \(-[A-Za-z]\), \(--[a-z0-9-]*\) <.*/\1\n\2/p' \
      -e 's/^      \(--[a-z0-9-]*\) <.*/\1/p'
}

# sample-record beside PROGRAM (the same build or prefix), else on PATH.
_sample_recorder() {
  local dir=${1%/*}
  if [[ $1 == */* && -x $dir/sample-record ]]; then
    echo "$dir/sample-record"
  elif [[ $1 == */* && -x $dir/../record/sample-record ]]; then
    echo "$dir/../record/sample-record"
  else
    echo sample-record
  fi
}

# Event names for -e: WORD may be a comma list; its last item is completed.
_sample_events() {
  local program=$1 word=$2 head= item=$2
  if [[ $word == *,* ]]; then
    head=${word%,*},
    item=${word##*,}
  fi
  local recorder names
  recorder=$(_sample_recorder "$program")
  if [[ $item == *:* ]]; then
    names=$("$recorder" --list-events "$item*" 2>/dev/null)
  else
    names=$("$recorder" --list-events 2>/dev/null | awk '{ print $1 }')
  fi
  local name
  for name in $names; do
    [[ $name == "$item"* ]] && printf '%s\n' "$head$name"
  done
}

_sample() {
  local program=${COMP_WORDS[0]}
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  # Bash splits words at ':' (and '='): take the word from the line itself.
  local line=${COMP_LINE:0:COMP_POINT}
  cur=${line##*[[:space:]]}
  if [[ $cur == --*=* ]]; then
    prev=${cur%%=*}
    cur=${cur#*=}
  else
    local before=${line%"$cur"}
    before=${before%"${before##*[![:space:]]}"}
    prev=${before##*[[:space:]]}
  fi
  COMPREPLY=()
  case $prev in
    -e | --event)
      if [[ $program != *sample-report ]]; then
        mapfile -t COMPREPLY < <(_sample_events "$program" "$cur")
      fi
      ;;
    -i | --input | -o | --output | --symfs | --diff)
      # Bash quotes what it inserts; the word as typed may hold "\ ".
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "${cur//\\ / }")
      ;;
    -p | --pid)
      mapfile -t COMPREPLY < <(compgen -W "$(ls /proc | grep -E '^[0-9]+$')" -- "$cur")
      ;;
    -s | --sort)
      mapfile -t COMPREPLY < <(compgen -W "comm pid tid dso sym cpu srcline inline dso_daddr symbol_daddr" -- "$cur")
      ;;
    --format)
      mapfile -t COMPREPLY < <(compgen -W "text json folded svg html pprof speedscope gecko" -- "$cur")
      ;;
    --call-graph)
      if [[ $program == *sample-report ]]; then
        mapfile -t COMPREPLY < <(compgen -W "graph fractal flat folded none caller callee" -- "$cur")
      else
        mapfile -t COMPREPLY < <(compgen -W "fp fp,leaf dwarf no" -- "$cur")
      fi
      ;;
    *)
      if [[ $prev == -* && $cur != -* ]] &&
        grep -qxF -- "$prev" < <(_sample_value_options "$program"); then
        return 0  # a value (a number, a name) nothing here can guess
      fi
      if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_sample_options "$program")" -- "$cur")
      elif [[ $program != *sample-report && $program != *sample-top ]]; then
        mapfile -t COMPREPLY < <(compgen -c -- "$cur")  # the command to record
      fi
      ;;
  esac
  # What bash will replace is only the part of the word after its last ':'.
  if [[ $cur == *:* && $COMP_WORDBREAKS == *:* ]]; then
    local colon=${cur%"${cur##*:}"} i
    for i in "${!COMPREPLY[@]}"; do COMPREPLY[i]=${COMPREPLY[i]#"$colon"}; done
  fi
}

complete -F _sample sample-record sample-report sample-top
