# bash completion for cudaconv: its commands, its options (as `--help`
# lists them, asked of the binary being completed, so never out of date),
# -f's named filters, -k's variants and the choices of the options that
# have a few. Installed to share/bash-completion/completions/cudaconv.
_cudaconv() {
  local cur prev cmd
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD - 1]}
  cmd=${COMP_WORDS[0]}
  local sub=""
  ((COMP_CWORD > 1)) && case ${COMP_WORDS[1]} in list | compare | bench | help) sub=${COMP_WORDS[1]} ;; esac

  # Filter syntaxes (gaussian:N) by their name before ':'; variants, their
  # paths (fast.strips) included, by the lines that name CPU or CUDA.
  _cudaconv_filters() { "$cmd" list filters 2>/dev/null | awk '/^[a-z]/ {sub(/:.*/, "", $1); print $1}' | sort -u; }
  _cudaconv_variants() { "$cmd" list kernels 2>/dev/null | awk '$2 == "CPU" || $2 == "CUDA" {print $1}'; }

  case $prev in
    -f | --filter)
      COMPREPLY=($(compgen -W "$(_cudaconv_filters) none" -- "$cur") $(compgen -f -- "$cur"))
      return ;;
    -k | --kernel)
      COMPREPLY=($(compgen -W "auto $(_cudaconv_variants)" -- "$cur")); return ;;
    --border) COMPREPLY=($(compgen -W "reflect101 reflect replicate constant wrap valid" -- "$cur")); return ;;
    --depth) COMPREPLY=($(compgen -W "same u8 u16 f32" -- "$cur")); return ;;
    --alpha) COMPREPLY=($(compgen -W "keep filter premultiply" -- "$cur")); return ;;
    --combine) COMPREPLY=($(compgen -W "magnitude max sum stack" -- "$cur")); return ;;
    --activation) COMPREPLY=($(compgen -W "none relu" -- "$cur")); return ;;
    --pool) COMPREPLY=($(compgen -W "none max2" -- "$cur")); return ;;
    --decoder | --encoder) COMPREPLY=($(compgen -W "auto cpu gpu" -- "$cur")); return ;;
    --devices) COMPREPLY=($(compgen -W "all 1 2" -- "$cur")); return ;;
    --gpu-threads) COMPREPLY=($(compgen -W "1 2" -- "$cur")); return ;;
    --jpeg-sampling) COMPREPLY=($(compgen -W "420 422 444" -- "$cur")); return ;;
    --background) COMPREPLY=($(compgen -W "white black" -- "$cur")); return ;;
    --log-level) COMPREPLY=($(compgen -W "trace debug info warn error off" -- "$cur")); return ;;
    -o | --output | --from | --json | --csv | --diff | --weights | --bias) COMPREPLY=($(compgen -f -- "$cur")); return ;;
  esac
  if [[ $sub == list && $COMP_CWORD -eq 2 ]]; then
    COMPREPLY=($(compgen -W "filters kernels devices" -- "$cur")); return
  fi
  if [[ $sub == help && $COMP_CWORD -eq 2 ]]; then
    COMPREPLY=($(compgen -W "list compare bench" -- "$cur")); return
  fi
  if [[ $cur == -* ]]; then
    local opts
    opts=$("$cmd" ${sub:+$sub} --help 2>/dev/null | grep -oE -- '(^|[ ,])--?[a-zA-Z][a-zA-Z0-9-]*' | tr -d ' ,' | sort -u)
    COMPREPLY=($(compgen -W "$opts" -- "$cur")); return
  fi
  if ((COMP_CWORD == 1)); then
    COMPREPLY=($(compgen -W "list compare bench help" -- "$cur") $(compgen -f -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _cudaconv cudaconv
