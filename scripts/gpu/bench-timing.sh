# Sourced by scripts/gpu/ab.sh (on the GPU machine): one
# `cudaconv bench` run's median, and the median of several.

# One run's median in µs, or its WRONG / refusal line.
time_one() {  # BINARY SIZE DEPTH FILTER VARIANT [NAME=VALUE ...] (bench --param)
  local line binary=$1 size=$2 depth=$3 filter=$4 variant=$5
  shift 5
  local params=()
  for p in "$@"; do params+=(--param "$p"); done
  line=$("$binary" bench --size "$size" --depth "$depth" -f "$filter" -k "$variant" "${params[@]}" \
    -q 2>&1 | grep -E "^$variant |WRONG" | head -1)
  case $line in
    *WRONG*) echo "WRONG" ;;
    *µs*) awk '{print $2}' <<<"$line" ;;
    *) echo "—" ;;
  esac
}

# The median of the numbers among the words on standard input.
median() { tr ' ' '\n' | grep -E '^[0-9.]+$' | sort -g | awk '{v[NR]=$1} END {if (NR) print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
