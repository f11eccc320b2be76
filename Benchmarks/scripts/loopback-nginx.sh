# Sourced by the benchmark scripts: `start_loopback_nginx WORK PROBE [EXTRA_LISTEN]` serves
# WORK/www from an nginx on a free port of 127.0.0.1 (configured for throughput: sendfile,
# long keep-alive, no access log), waits until PROBE (a path under www) answers, and sets
# NGINX_PORT and NGINX_PID. EXTRA_LISTEN adds a `listen` line (download.sh's shaped link).
# The caller kills NGINX_PID when it ends.
start_loopback_nginx() {
  local work=$1 probe=$2 extra_listen=${3:-}
  NGINX_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  if [[ -n "$extra_listen" ]]; then extra_listen="listen $extra_listen:$NGINX_PORT;"; fi
  mkdir -p "$work/nginx/logs" "$work/nginx/tmp"
  cat > "$work/nginx/nginx.conf" <<CONF
worker_processes 2;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    keepalive_timeout 60s;
    client_body_temp_path $work/nginx/tmp/body;
    proxy_temp_path $work/nginx/tmp/proxy;
    fastcgi_temp_path $work/nginx/tmp/fastcgi;
    uwsgi_temp_path $work/nginx/tmp/uwsgi;
    scgi_temp_path $work/nginx/tmp/scgi;
    types { image/jpeg jpg; image/png png; }
    server {
        listen 127.0.0.1:$NGINX_PORT;
        $extra_listen
        root $work/www;
    }
}
CONF
  /usr/sbin/nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" &
  NGINX_PID=$!
  # Up within 5 s, or the run stops here rather than measuring refused connections.
  local _
  for _ in $(seq 50); do
    curl -sf -o /dev/null "http://127.0.0.1:$NGINX_PORT/$probe" && return 0
    sleep 0.1
  done
  echo "nginx did not serve /$probe within 5 s (log: $work/nginx/logs/error.log)" >&2
  return 1
}
