set -e
apt-get update -qq
apt-get install -y -qq --no-install-recommends mariadb-server mariadb-client
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
setsid mysqld_safe --sql-mode=STRICT_TRANS_TABLES > /var/log/mysqld_safe.log 2>&1 < /dev/null &
for i in $(seq 100); do mysqladmin ping >/dev/null 2>&1 && break; sleep 0.3; done
# Under STRICT_TRANS_TABLES the 15-character name does not fit VARCHAR(8): widen the column.
sed 's/VARCHAR(8)/VARCHAR(64)/' /testbed/seed.sql > /tmp/seed.sql
mysql -e "CREATE DATABASE benchmark_db CHARACTER SET utf8mb4"
mysql -e "CREATE USER 'benchmark_user'@'localhost' IDENTIFIED BY 'benchmark_pass'"
mysql -e "GRANT ALL PRIVILEGES ON benchmark_db.* TO 'benchmark_user'@'localhost'"
mysql benchmark_db < /tmp/seed.sql
