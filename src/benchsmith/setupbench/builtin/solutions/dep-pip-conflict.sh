set -e
apt-get update -qq
apt-get install -y -qq --no-install-recommends python3-pip
# requests 2.31.0 needs urllib3>=1.21.1,<3: the pin of urllib3 is the one to move.
sed -i 's/^urllib3==.*/urllib3==2.0.7/' /testbed/requirements.txt
pip install --break-system-packages -q -r /testbed/requirements.txt
