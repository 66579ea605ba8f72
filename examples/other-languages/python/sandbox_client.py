"""A few lines of HTTP for the tests: a call with JSON in and out, and one partner's key with its
access token. Standard library only (urllib)."""
import base64
import json
import urllib.error
import urllib.request


class HttpError(Exception):
    """An HttpError answered by the sandbox: status and its {code, message, validation_errors}."""

    def __init__(self, status, body):
        super().__init__(f"{status} {body.get('code')}: {body.get('message')}")
        self.status, self.body = status, body


def request(method, url, body=None, headers=None):
    """One HTTP call; JSON in and out. An error status raises HttpError."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            text = res.read()
            return json.loads(text) if text else None
    except urllib.error.HTTPError as error:
        raise HttpError(error.code, json.loads(error.read() or b"{}")) from None


# #region client
class Client:
    """The API as one partner's key: a token from POST /oauth/token, then Bearer on every call."""

    def __init__(self, base_url, client_id, client_secret):
        self.base_url, self.client_id, self.client_secret = base_url, client_id, client_secret
        basic = base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()
        req = urllib.request.Request(f"{base_url}/oauth/token", data=b"grant_type=client_credentials", method="POST",
                                     headers={"Authorization": f"Basic {basic}", "Content-Type": "application/x-www-form-urlencoded"})
        with urllib.request.urlopen(req, timeout=10) as res:
            self.token = json.loads(res.read())["access_token"]

    def call(self, method, path, body=None):
        # The control plane (/_sandbox/...) acts on the account this token names.
        return request(method, f"{self.base_url}{path}", body, {"Authorization": f"Bearer {self.token}"})
# #endregion client
