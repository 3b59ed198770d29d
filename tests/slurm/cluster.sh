#!/usr/bin/env bash
# A private single-node Slurm 22.05 cluster for the tests: its own munged, slurmctld and slurmd, all
# state, sockets, logs and PID files under one folder, nothing written under /etc.
#
#   eval "$(tests/slurm/cluster.sh start DIR)"   # start; prints "export SLURM_CONF=DIR/slurm.conf"
#   tests/slurm/cluster.sh env DIR               # print those lines again
#   tests/slurm/cluster.sh stop DIR              # cancel its jobs, stop its three daemons (idempotent)
#
# Runs as root (slurmd and the Slurm/munge daemons must; the jobs run as root too). Ports: SlurmctldPort
# and SlurmdPort are $KS_SLURMCTLD_PORT and $KS_SLURMD_PORT (default 16817 and 16818; when neither is set
# and those are taken, the next free pair above). $KS_SLURM_START_TIMEOUT (default 60) bounds the wait
# for the node to be idle. $KS_SLURM_CRED_EXPIRE, when set, is AuthInfo's cred_expire (seconds; Slurm's
# default 120 is also how long a requeued job waits before it may start again). Messages go to stderr;
# only the export lines go to stdout.
set -euo pipefail

die() { echo "cluster.sh: $*" >&2; exit 1; }
say() { echo "cluster.sh: $*" >&2; }

usage() {
  echo "usage: $0 start|stop|env DIR" >&2
  exit 2
}

(($# == 2)) || usage
cmd=$1
dir=$(realpath -m -- "$2")
conf=$dir/slurm.conf
socket=$dir/munge/munge.socket.2

env_lines() {
  printf 'export SLURM_CONF=%q\n' "$conf"
  printf 'export KS_SLURM_DIR=%q\n' "$dir"
}

# pid_of NAME: the PID saved in DIR/NAME.pid when that process is alive, is NAME and was started for
# this DIR (its command line names a file under DIR); nothing otherwise.
pid_of() {
  local name=$1 pid comm
  [[ -s $dir/$name.pid ]] || return 0
  pid=$(<"$dir/$name.pid")
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  [[ -r /proc/$pid/comm ]] || return 0
  comm=$(<"/proc/$pid/comm")
  [[ $comm == "$name" ]] || return 0
  tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$dir/" || return 0
  echo "$pid"
}

# stop_daemon NAME: SIGTERM, up to 15 s, then SIGKILL; only the PID saved under DIR.
stop_daemon() {
  local name=$1 pid i
  pid=$(pid_of "$name")
  if [[ -n $pid ]]; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 150; i++)); do
      [[ -d /proc/$pid ]] || break
      # A zombie child of this shell counts as gone.
      [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) == Z ]] && break
      sleep 0.1
    done
    if [[ -d /proc/$pid && $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]]; then
      say "$name ($pid) still alive after 15 s of SIGTERM: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
    say "stopped $name ($pid)"
  fi
  rm -f "$dir/$name.pid"
}

do_stop() {
  [[ -d $dir ]] || return 0
  # Cancel this cluster's jobs first, so that no job step outlives the daemons.
  if [[ -n $(pid_of slurmctld) && -n $(pid_of munged) && -f $conf ]]; then
    local jobs i
    jobs=$(SLURM_CONF=$conf timeout 10 squeue -h -o %i 2>/dev/null || true)
    if [[ -n $jobs ]]; then
      say "cancelling jobs: ${jobs//$'\n'/ }"
      # shellcheck disable=SC2086
      SLURM_CONF=$conf timeout 10 scancel $jobs 2>/dev/null || true
      # The job steps are gone when their sockets (spool/HOST_JOB.STEP) are: up to 20 s.
      for ((i = 0; i < 100; i++)); do
        [[ -n $(find "$dir/spool" -maxdepth 1 -type s -print -quit 2>/dev/null) ]] || break
        sleep 0.2
      done
    fi
  fi
  stop_daemon slurmd
  stop_daemon slurmctld
  stop_daemon munged
}

port_busy() { [[ -n $(ss -Hltn "sport = :$1" 2>/dev/null) ]]; }

start_bg() { # start_bg NAME LOG COMMAND...: in its own session, detached from our stdio; PID to DIR/NAME.pid
  local name=$1 out=$2
  shift 2
  setsid "$@" </dev/null >>"$out" 2>&1 &
  local pid=$! i
  echo "$pid" >"$dir/$name.pid"
  # Until the exec, /proc/PID/comm is this shell's; wait for it to be the daemon's.
  for ((i = 0; i < 50; i++)); do
    [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$name" ]] && return 0
    sleep 0.05
  done
}

show_logs() {
  local f
  for f in "$dir"/log/*; do
    [[ -f $f ]] || continue
    echo "----- $f (last 40 lines)" >&2
    tail -n 40 "$f" >&2
  done
}

fail_start() {
  say "$*"
  show_logs
  do_stop
  exit 1
}

do_start() {
  [[ $(id -u) -eq 0 ]] || die "start needs root (munged, slurmctld and slurmd run as root here)"
  local b
  for b in munged mungekey slurmctld slurmd sinfo; do
    command -v "$b" >/dev/null || die "$b not found: run scripts/install-deps.sh (slurm-wlm)"
  done
  ((${#socket} < 100)) || die "$socket: too long for a unix socket path; use a shorter DIR"
  if [[ -n $(pid_of slurmctld)$(pid_of slurmd)$(pid_of munged) ]]; then
    die "a cluster is already running in $dir (stop it first)"
  fi
  local t0=$SECONDS

  # Ports.
  local cport=${KS_SLURMCTLD_PORT:-16817} dport=${KS_SLURMD_PORT:-16818}
  if [[ -z ${KS_SLURMCTLD_PORT:-}${KS_SLURMD_PORT:-} ]]; then
    local tries=0
    while port_busy "$cport" || port_busy "$dport"; do
      ((++tries < 100)) || die "no free port pair from 16817 up"
      cport=$((cport + 2)) dport=$((dport + 2))
    done
  else
    port_busy "$cport" && die "SlurmctldPort $cport is in use"
    port_busy "$dport" && die "SlurmdPort $dport is in use"
  fi

  # Folders: fresh state every start.
  mkdir -p "$dir"
  chmod 0755 "$dir"
  rm -rf "$dir/state" "$dir/spool" "$dir/tmp" "$dir/log" "$dir/munge" "$dir/munge-key"
  mkdir -p "$dir/state" "$dir/spool" "$dir/tmp" "$dir/log"
  install -d -m 0755 -o root -g root "$dir/munge"     # socket, pid, seed: world-readable folder
  install -d -m 0700 -o root -g root "$dir/munge-key" # the key: root alone

  # munge: a key of our own, a daemon of our own on a socket of our own.
  mungekey --create --keyfile="$dir/munge-key/munge.key" >/dev/null 2>&1 ||
    dd if=/dev/urandom of="$dir/munge-key/munge.key" bs=1024 count=1 status=none
  chown root:root "$dir/munge-key/munge.key"
  chmod 0400 "$dir/munge-key/munge.key"
  start_bg munged "$dir/log/munged.out" munged --foreground --force \
    --socket="$socket" --key-file="$dir/munge-key/munge.key" --pid-file="$dir/munge/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed"
  local i
  for ((i = 0; i < 100; i++)); do
    [[ -S $socket ]] && munge -n -S "$socket" 2>/dev/null | unmunge -S "$socket" >/dev/null 2>&1 && break
    [[ -n $(pid_of munged) ]] || fail_start "munged exited at start"
    sleep 0.1
  done
  ((i < 100)) || fail_start "munged did not answer on $socket within 10 s"

  # slurm.conf: the node as slurmd -C sees it, memory a little under what it reports.
  local host node mem
  host=$(hostname -s)
  node=$(slurmd -C | head -n 1)
  [[ $node == NodeName=* ]] || fail_start "slurmd -C printed no NodeName line: $node"
  mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$node")
  if [[ -n $mem ]]; then
    node=${node/RealMemory=$mem/RealMemory=$((mem * 9 / 10))}
  fi
  # The node offers 16 cores whatever it has (config_overrides: slurmd takes the configuration's
  # word), so that the test cases' jobs, which sleep more than they compute, run side by side
  # instead of waiting for each other's cores.
  node=$(sed -E 's/ CPUs=[0-9]+/ CPUs=16/; s/ Boards=[0-9]+//; s/ SocketsPerBoard=[0-9]+/ SocketsPerBoard=1/;
                 s/ CoresPerSocket=[0-9]+/ CoresPerSocket=16/; s/ ThreadsPerCore=[0-9]+/ ThreadsPerCore=1/' <<<"$node")
  cat >"$conf" <<EOF
# Written by tests/slurm/cluster.sh: a private single-node test cluster; everything under $dir.
ClusterName=kstest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$cport
SlurmdPort=$dport
AuthType=auth/munge
AuthInfo=socket=$socket${KS_SLURM_CRED_EXPIRE:+,cred_expire=$KS_SLURM_CRED_EXPIRE}
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
TmpFS=$dir/tmp
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=pmix
MailProg=/bin/true
MinJobAge=5
SchedulerParameters=batch_sched_delay=0,sched_interval=1
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.txt
ReturnToService=2
SlurmdParameters=config_overrides
$node State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF

  start_bg slurmctld "$dir/log/slurmctld.out" slurmctld -D -f "$conf"
  start_bg slurmd "$dir/log/slurmd.out" slurmd -D -f "$conf" -N "$host"

  local timeout=${KS_SLURM_START_TIMEOUT:-60} state=
  while ((SECONDS - t0 < timeout)); do
    [[ -n $(pid_of slurmctld) ]] || fail_start "slurmctld exited at start"
    [[ -n $(pid_of slurmd) ]] || fail_start "slurmd exited at start"
    state=$(SLURM_CONF=$conf timeout 5 sinfo -h -N -n "$host" -o %T 2>/dev/null || true)
    [[ $state == idle ]] && break
    sleep 0.2
  done
  [[ $state == idle ]] || fail_start "node $host not idle after ${timeout} s (state: ${state:-none})"
  say "cluster kstest up in $dir in $((SECONDS - t0)) s (node $host idle; ports $cport/$dport)"
  env_lines
}

case $cmd in
  start) do_start ;;
  stop) do_stop ;;
  env)
    [[ -f $conf ]] || die "no cluster in $dir ($conf missing)"
    env_lines
    ;;
  *) usage ;;
esac
