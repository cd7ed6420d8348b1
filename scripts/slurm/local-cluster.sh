#!/usr/bin/env bash
# A one-node Slurm cluster in a folder, for tests: its own munged (socket,
# key and logs in the folder), slurmctld and slurmd on free ports, one
# node with this machine's CPUs and 4 stand-in GPUs (so that a script's
# --gres=gpu:1 is honoured; cudaconv's CPU variants run in the tasks), one
# partition. Needs root (slurmd starts
# the tasks) and Debian's slurm-wlm and munge.
#   local-cluster.sh start DIR   starts it; prints the line to eval
#                                (export SLURM_CONF=DIR/slurm.conf)
#   local-cluster.sh stop DIR    stops the daemons it started, by their pids
set -euo pipefail

usage() { echo "usage: local-cluster.sh start|stop DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
action=$1 dir=$(realpath -m "$2")

# The pids the start wrote, one a file, in the order they are stopped.
pid_files=("$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid")

stop() {
  local f pid
  for f in "${pid_files[@]}"; do
    [[ -s $f ]] || continue
    pid=$(<"$f")
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "local-cluster: pid $pid ($f) ignored SIGTERM for 10 s; killed" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
}

# A TCP port nothing listens on, from a range the kernel does not hand out
# for outgoing connections.
free_port() {
  local port
  for port in $(shuf -i 20000-30000 -n 50); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  echo "local-cluster: no free port found" >&2
  exit 1
}

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local seconds=$1 what=$2
  shift 2
  for _ in $(seq $((seconds * 10))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "local-cluster: $what did not come up in $seconds s; its log:" >&2
  return 1
}

start() {
  [[ $(id -u) -eq 0 ]] || { echo "local-cluster: needs root (slurmd)" >&2; exit 1; }
  mkdir -p "$dir"/{state,spool,munge}
  chmod 755 "$dir"
  # munged checks that its key is the munge user's alone and that its
  # socket's folder can be entered by all.
  head -c 128 /dev/urandom >"$dir/munge/munge.key"
  chmod 400 "$dir/munge/munge.key"
  chmod 755 "$dir/munge"
  chown -R munge:munge "$dir/munge"
  runuser -u munge -- test -x "$dir/munge" ||
    { echo "local-cluster: the munge user cannot reach $dir (a folder above it is private)" >&2; exit 1; }
  runuser -u munge -- munged --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
    --seed-file="$dir/munge/munged.seed"

  local host cpus memory_mb
  host=$(hostname -s)
  cpus=$(nproc)
  memory_mb=$(awk '/MemAvailable/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
  cat >"$dir/slurm.conf" <<CONF
ClusterName=cudaconv-test
SlurmctldHost=$host
SlurmUser=root
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
KillWait=10
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
GresTypes=gpu
NodeName=$host CPUs=$cpus RealMemory=$memory_mb Gres=gpu:4 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  # slurmd keeps GPUs only with device files: four stand-ins made as
  # /dev/null is (char 1:3), which nothing opens.
  local i
  for i in 0 1 2 3; do
    [[ -e $dir/gpu$i ]] || mknod "$dir/gpu$i" c 1 3
  done
  echo "NodeName=$host Name=gpu File=$dir/gpu[0-3]" >"$dir/gres.conf"
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -i || { cat "$dir/slurmctld.log" >&2; stop; exit 1; }
  wait_for 20 slurmctld scontrol ping || { cat "$dir/slurmctld.log" >&2; stop; exit 1; }
  slurmd || { cat "$dir/slurmd.log" >&2; stop; exit 1; }
  wait_for 30 "the node" bash -c "sinfo -h -N -o %T | grep -qE '^(idle|mixed|allocated)'" ||
    { cat "$dir/slurmd.log" >&2; stop; exit 1; }
  echo "export SLURM_CONF=$dir/slurm.conf"
}

case $action in
  start) start ;;
  stop) stop ;;
  *) usage ;;
esac
