set -e
apt-get update -qq
apt-get install -y -qq --no-install-recommends redis-server redis-tools
redis-server --daemonize yes --bind 127.0.0.1 --port 6379
for i in $(seq 50); do redis-cli ping >/dev/null 2>&1 && break; sleep 0.2; done
redis-cli < /testbed/seed.redis
