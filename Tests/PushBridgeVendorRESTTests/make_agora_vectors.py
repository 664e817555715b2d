#!/usr/bin/env python3
"""Writes agora-token-vectors.json with Agora's own AccessToken2 builder
(`pip install agora-rest-client-python`: `agora_rest.utils.AccessToken2`, AgoraIO/Tools' Python builder).

The vectors are committed; the package is not. Issue times are pinned (the salt is the builder's own
random draw, carried in each token):
    python3 make_agora_vectors.py > agora-token-vectors.json
"""
import json

from agora_rest.utils.AccessToken2 import AccessToken, ServiceChat, ServiceRtc

APP_ID = "970CA35de60c44645bbae8a215061b33"          # Agora's documentation sample App ID
CERT = "5CFd2fd1755d40ecb72977518be15d3b"            # Agora's documentation sample App Certificate
OTHER_ID = "0123456789abcdef0123456789abcdef"
OTHER_CERT = "fedcba9876543210fedcba9876543210"

def chat(app_id, cert, issue_ts, expire, privilege=ServiceChat.kPrivilegeApp, user=""):
    token = AccessToken(app_id, cert, issue_ts=issue_ts, expire=expire)
    service = ServiceChat(user)
    service.add_privilege(privilege, expire)
    token.add_service(service)
    return token.build()

def rtc_only(app_id, cert, issue_ts, expire):
    token = AccessToken(app_id, cert, issue_ts=issue_ts, expire=expire)
    service = ServiceRtc("channel", 42)
    service.add_privilege(ServiceRtc.kPrivilegeJoinChannel, expire)
    token.add_service(service)
    return token.build()

vectors = [
    {"kind": "app", "appId": APP_ID, "appCertificate": CERT, "issueTs": 1795000000, "expire": 86400,
     "token": chat(APP_ID, CERT, 1795000000, 86400)},
    {"kind": "app", "appId": APP_ID, "appCertificate": CERT, "issueTs": 1795000001, "expire": 1,
     "token": chat(APP_ID, CERT, 1795000001, 1)},
    {"kind": "app", "appId": OTHER_ID, "appCertificate": OTHER_CERT, "issueTs": 1700000000, "expire": 3600,
     "token": chat(OTHER_ID, OTHER_CERT, 1700000000, 3600)},
    {"kind": "user", "appId": APP_ID, "appCertificate": CERT, "issueTs": 1795000000, "expire": 3600,
     "token": chat(APP_ID, CERT, 1795000000, 3600, ServiceChat.kPrivilegeUser, "alice")},
    {"kind": "rtc", "appId": APP_ID, "appCertificate": CERT, "issueTs": 1795000000, "expire": 3600,
     "token": rtc_only(APP_ID, CERT, 1795000000, 3600)},
    {"kind": "too-long", "appId": APP_ID, "appCertificate": CERT, "issueTs": 1795000000, "expire": 7 * 86400,
     "token": chat(APP_ID, CERT, 1795000000, 7 * 86400)},
]
print(json.dumps({"generator": "agora-rest-client-python (PyPI) 0.1.3, agora_rest.utils.AccessToken2", "vectors": vectors}, indent=2))
