#!/usr/bin/env python3
"""A vendor backend pointed at PushBridge (the article "Drop-in for vendor REST", Sources/pushbridge/PushBridge.docc/VendorREST.md).

Only the standard library and Tencent's own UserSig generator (`pip install tls-sig-api-v2`).
It sets an app up through the native API (certificates, vendor credentials, the receivers'
devices: what the apps' SDKs would report), then talks to PushBridge exactly as a backend talks
to Easemob and to Tencent Cloud IM, and checks the decisions PushBridge made.

    PUSHBRIDGE_URL=http://127.0.0.1:8080 PUSHBRIDGE_ADMIN_KEY=… python3 drop_in.py

PUSHBRIDGE_TIMEOUT_SECONDS bounds each request (10 by default).

Exits 0 when every check passes; prints each step.
"""
import json
import os
import sys
import urllib.error
import urllib.request
import uuid

import TLSSigAPIv2

BASE = os.environ.get("PUSHBRIDGE_URL", "http://127.0.0.1:8080")
ADMIN_KEY = os.environ["PUSHBRIDGE_ADMIN_KEY"]
TIMEOUT = float(os.environ.get("PUSHBRIDGE_TIMEOUT_SECONDS", "10"))
APP = "dropin-" + uuid.uuid4().hex[:8]
SDKAPPID, SECRET_KEY = 1400000000 + int(uuid.uuid4().int % 99999), uuid.uuid4().hex + uuid.uuid4().hex
ORG, NAME, CLIENT_ID, CLIENT_SECRET = "demo-org", APP, "YXA6" + uuid.uuid4().hex, "YXA6" + uuid.uuid4().hex
TOKEN_BOB = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
TOKEN_CAROL = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"


def call(method, path, body=None, token=None, expect=(200, 201)):
    """One JSON request; returns (status, headers, parsed body)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(BASE + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            status, headers, text = response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        status, headers, text = error.code, error.headers, error.read()
    parsed = json.loads(text) if text else None
    if status not in expect:
        sys.exit(f"{method} {path}: HTTP {status}: {parsed}")
    return status, headers, parsed


def check(what, condition, detail):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        sys.exit(f"  {detail}")


def decisions(key, headers):
    """The decisions of the messages a vendor send made (their ids are in PushBridge-Messages)."""
    out = []
    for message in headers["PushBridge-Messages"].split(","):
        out += call("GET", f"/v1/apps/{APP}/messages/{message}", token=key)[2]["decisions"]
    return out


# The app, as its operator sets it up once (native API).
_, _, created = call("POST", "/v1/apps", {"app": APP}, token=ADMIN_KEY)
KEY = created["key"]
call("PUT", f"/v1/apps/{APP}", {"certificates": [
    {"name": "chat-dev", "bundleId": "com.example.chat", "environment": "development"},
    {"busiId": 2383, "bundleId": "com.example.chat", "environment": "development"}]}, token=KEY)
call("PUT", f"/v1/apps/{APP}/vendors/easemob",
     {"org": ORG, "app": NAME, "clientId": CLIENT_ID, "clientSecret": CLIENT_SECRET}, token=KEY)
call("PUT", f"/v1/apps/{APP}/vendors/tencent", {"sdkAppId": SDKAPPID, "secretKey": SECRET_KEY, "administrator": "administrator"},
     token=KEY)
# What the receivers' SDKs report: their device tokens.
call("POST", f"/v1/apps/{APP}/users/bob/calls?dialect=easemob-legacy", [
    {"call": "initializeSDK", "appkey": f"{ORG}#{NAME}", "apnsCertName": "chat-dev"},
    {"call": "bindDeviceToken", "deviceToken": TOKEN_BOB}], token=KEY)
call("POST", f"/v1/apps/{APP}/users/carol/calls?dialect=tencent-tim", [{"call": "setToken", "busiId": 2383, "token": TOKEN_CAROL}],
     token=KEY)

# Easemob: the backend's own calls, unchanged but for the host.
_, _, grant = call("POST", f"/{ORG}/{NAME}/token",
                   {"grant_type": "client_credentials", "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET})
check("easemob: app token from client credentials", grant["expires_in"] > 0 and grant["access_token"], grant)
token = grant["access_token"]
_, _, user = call("PUT", f"/{ORG}/{NAME}/users/alice", {"nickname": "Alice"}, token=token)
check("easemob: nickname set", user["entities"][0]["nickname"] == "Alice", user)
_, _, user = call("PUT", f"/{ORG}/{NAME}/users/bob", {"notification_display_style": 1}, token=token)
check("easemob: bob shows message content", user["entities"][0]["notification_display_style"] == 1, user)
_, headers, sent = call("POST", f"/{ORG}/{NAME}/messages",
                        {"target_type": "users", "target": ["bob"], "msg": {"type": "txt", "msg": "Lunch?"}, "from": "alice"},
                        token=token)
check("easemob: message accepted", sent["data"] == {"bob": "success"}, sent)
decided = decisions(KEY, headers)
payload = decided[0].get("payload", {})
check("easemob: bob is pushed \"Alice:Lunch?\"", decided[0]["push"] and payload["aps"]["alert"]["body"] == "Alice:Lunch?", decided)
_, _, refused = call("POST", f"/{ORG}/{NAME}/messages", {"target_type": "users", "target": ["bob"]}, token=token, expect=(400,))
check("easemob: a bad body gets the vendor's error", refused["error"] == "illegal_argument" and "/msg" in refused["error_description"],
      refused)

# Tencent: a real UserSig made by Tencent's own generator.
usersig = TLSSigAPIv2.TLSSigAPIv2(SDKAPPID, SECRET_KEY).gen_sig("administrator")
query = f"sdkappid={SDKAPPID}&identifier=administrator&usersig={usersig}&random=99999999&contenttype=json"
_, headers, answer = call("POST", f"/v4/openim/sendmsg?{query}", {
    "From_Account": "alice", "To_Account": "carol", "MsgRandom": 1287657,
    "MsgBody": [{"MsgType": "TIMTextElem", "MsgContent": {"Text": "hello"}}],
    "OfflinePushInfo": {"PushFlag": 0, "Desc": "New message", "ApnsInfo": {"Sound": "dingdong.aiff", "BadgeMode": 0}}})
check("tencent: ActionStatus OK", answer["ActionStatus"] == "OK" and answer["ErrorCode"] == 0, answer)
decided = decisions(KEY, headers)
aps = decided[0].get("payload", {}).get("aps", {})
check("tencent: carol is pushed with the message's sound and badge 1",
      decided[0]["push"] and aps.get("sound") == "dingdong.aiff" and aps.get("badge") == 1, decided)
forged = TLSSigAPIv2.TLSSigAPIv2(SDKAPPID, "not-the-key").gen_sig("administrator")
_, _, answer = call("POST", f"/v4/openim/sendmsg?sdkappid={SDKAPPID}&identifier=administrator&usersig={forged}&random=1&contenttype=json",
                    {"To_Account": "carol", "MsgRandom": 1, "MsgBody": [{"MsgType": "TIMTextElem", "MsgContent": {"Text": "x"}}]})
check("tencent: a UserSig made with another key is refused (70009)", answer["ActionStatus"] == "FAIL" and answer["ErrorCode"] == 70009,
      answer)
print("all checks passed")
