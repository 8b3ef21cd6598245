set -e
apt-get update -qq
apt-get install -y -qq --no-install-recommends supervisor gunicorn
cat > /etc/supervisor/conf.d/web.conf <<'CONF'
[program:web]
command=gunicorn --bind 127.0.0.1:8000 --chdir /testbed app:app
autostart=true
autorestart=true
startsecs=1
CONF
supervisord -c /etc/supervisor/supervisord.conf
for i in $(seq 50); do supervisorctl status web 2>/dev/null | grep -q RUNNING && break; sleep 0.2; done
