set -e
apt-get update -qq
apt-get install -y -qq --no-install-recommends postgresql postgresql-client
version=$(ls /etc/postgresql | sort -V | tail -1)
pg_ctlcluster "$version" main start
su postgres -c "psql -v ON_ERROR_STOP=1 -c \"CREATE USER benchmark_user WITH PASSWORD 'benchmark_pass'\""
su postgres -c "createdb -O benchmark_user benchmark_db"
PGPASSWORD=benchmark_pass psql -v ON_ERROR_STOP=1 -h 127.0.0.1 -U benchmark_user -d benchmark_db -f /testbed/dump.sql
