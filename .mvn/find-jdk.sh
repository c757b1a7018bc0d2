# shellcheck shell=sh
# Sourced by ./mvnw and ./cqflux: makes JAVA_HOME a JDK >= CQFLUX_MIN_JDK (25).
# JAVA_HOME is kept if it is new enough; otherwise the newest JDK >= 25 under /usr/lib/jvm,
# /usr/java or /opt/java is used. None found: prints what to install and exits 1.
CQFLUX_MIN_JDK=25

cqflux_jdk_major() { # $1 = JDK home -> major version on stdout (nothing if not a JDK)
  [ -x "$1/bin/java" ] && [ -x "$1/bin/javac" ] || return 0
  "$1/bin/java" -XshowSettings:properties -version 2>&1 |
    sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p' | head -n 1
}

cqflux_find_jdk() {
  if [ -n "${JAVA_HOME:-}" ]; then
    _v=$(cqflux_jdk_major "$JAVA_HOME")
    if [ -n "$_v" ] && [ "$_v" -ge "$CQFLUX_MIN_JDK" ]; then
      return 0
    fi
    echo "cqflux: JAVA_HOME=$JAVA_HOME is JDK ${_v:-?}, below $CQFLUX_MIN_JDK; looking under /usr/lib/jvm" >&2
  fi
  _best="" _best_v=0
  # ./mvnw runs under `set -f`: globbing is needed for the scan, restored below.
  case $- in *f*) _noglob=1; set +f ;; *) _noglob=0 ;; esac
  for _d in /usr/lib/jvm/* /usr/java/* /opt/java/*; do
    [ -d "$_d" ] && [ ! -L "$_d" ] || continue
    _v=$(cqflux_jdk_major "$_d")
    if [ -n "$_v" ] && [ "$_v" -ge "$CQFLUX_MIN_JDK" ] && [ "$_v" -gt "$_best_v" ]; then
      _best=$_d _best_v=$_v
    fi
  done
  [ "$_noglob" -eq 1 ] && set -f
  if [ -z "$_best" ]; then
    cat >&2 <<MSG
cqflux: no JDK >= $CQFLUX_MIN_JDK found (JAVA_HOME unset or older; none under /usr/lib/jvm).
Install one, e.g. Temurin 25 from the Adoptium apt repository (apt-get install temurin-25-jdk)
or a distribution's openjdk-25-jdk, or set JAVA_HOME to one.
MSG
    exit 1
  fi
  JAVA_HOME=$_best
  export JAVA_HOME
}

cqflux_find_jdk
unset _v _d _best _best_v _noglob
