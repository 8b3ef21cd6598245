set -e
apt-get update -qq
apt-get install -y -qq --no-install-recommends sqlite3
sqlite3 /testbed/shop.db < /testbed/seed.sql
