set -e
apt-get update -qq
apt-get install -y -qq --no-install-recommends python3-pip
pip install --break-system-packages -q /testbed
