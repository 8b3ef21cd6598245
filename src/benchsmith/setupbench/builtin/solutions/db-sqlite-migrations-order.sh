set -e
apt-get update -qq
apt-get install -y -qq --no-install-recommends sqlite3
cd /testbed/migrations
# 002 needs the orders table (003) and the customers it references (004).
{ echo "PRAGMA foreign_keys = ON;"; cat 001_create_customers.sql 004_seed_customers.sql 003_create_orders.sql 002_seed_orders.sql; } \
  | sqlite3 -bail /testbed/app.db
