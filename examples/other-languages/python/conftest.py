"""pytest fixtures: the billing sandbox's image in a container for the session, a fresh partner per
test, and a webhook receiver on this machine. Standard library only (plus pytest): the container is
run with the docker CLI (DOCKER=podman works too), HTTP is urllib (sandbox_client.py).

Settings (environment):
  BILLING_SANDBOX_IMAGE        the image (default billing-sandbox:latest, from `docker build -t billing-sandbox .`)
  DOCKER                       the container CLI (default docker)
  BILLING_SANDBOX_HOST_ALIAS   how the container reaches this machine (default host.docker.internal,
                               mapped with --add-host ...:host-gateway; podman before 5.3 has no
                               host-gateway: use host.containers.internal, which podman adds itself)
"""
import json
import os
import queue
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from sandbox_client import Client, HttpError, request

IMAGE = os.environ.get("BILLING_SANDBOX_IMAGE", "billing-sandbox:latest")
DOCKER = os.environ.get("DOCKER", "docker").split()
HOST_ALIAS = os.environ.get("BILLING_SANDBOX_HOST_ALIAS", "host.docker.internal")


# #region fixtures
@pytest.fixture(scope="session")
def sandbox_url():
    """The sandbox in a container for the whole session; yields its base URL once it is healthy."""
    name = f"billing-sandbox-{os.getpid()}"
    add_host = ["--add-host", f"{HOST_ALIAS}:host-gateway"] if HOST_ALIAS == "host.docker.internal" else []
    subprocess.run([*DOCKER, "run", "-d", "--rm", "--name", name, "-p", "127.0.0.1::4010", *add_host,
                    IMAGE, "--rate-limit", "0", "--allow-http-webhooks"], check=True, capture_output=True)
    try:
        port = subprocess.run([*DOCKER, "port", name, "4010/tcp"], check=True, capture_output=True, text=True).stdout.split()[0].rsplit(":", 1)[1]
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:  # the wait: GET /_sandbox/health answers 200 once it serves
            try:
                if request("GET", f"{url}/_sandbox/health")["status"] == "ok":
                    break
            except (OSError, HttpError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"no healthy sandbox at {url} within 60 s")
            time.sleep(0.2)
        yield url
    finally:
        subprocess.run([*DOCKER, "stop", "-t", "10", name], capture_output=True)


@pytest.fixture
def partner(sandbox_url):
    """A fresh partner for one test (POST /_sandbox/partners): its own credentials and empty accounts."""
    made = request("POST", f"{sandbox_url}/_sandbox/partners", {"name": "pytest"})
    keys = made["credentials"]["production"]
    return Client(sandbox_url, keys["client_id"], keys["client_secret"])


@pytest.fixture
def receiver():
    """A webhook receiver on this machine, bound to 0.0.0.0 so the container can reach it."""
    received = queue.Queue()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            received.put((self.path, json.loads(self.rfile.read(int(self.headers["Content-Length"])))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("0.0.0.0", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    server.url = f"http://{HOST_ALIAS}:{server.server_address[1]}"  # as the container sees it
    server.received = received
    yield server
    server.shutdown()
    server.server_close()
# #endregion fixtures
