# Sourced by the benchmark scripts: `loopback_config DIR` writes DIR/cache.conf for a daemon
# that keeps its cache in DIR/cache, logs warnings only, and may fetch over plain HTTP from
# 127.0.0.1 (the scripts' own image servers).
loopback_config() {
  cat > "$1/cache.conf" <<CONF
[daemon]
log_level = warning
[cache]
cache_dir = $1/cache
[network]
allowed_hosts = 127.0.0.1
allow_http = true
CONF
}
