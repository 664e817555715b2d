#!/usr/bin/env python3
"""Writes usersig-vectors.json with Tencent's own generator (`pip install tls-sig-api-v2`).

The vectors are committed; the package is not. Time is pinned so the output is reproducible:
    python3 make_usersig_vectors.py > usersig-vectors.json
"""
import json
import time

import TLSSigAPIv2

KEY = "5bd2850fff3ecb11d7c805251c51ee463a25727bddc2385f3fa8bfee1bb93b5e"  # the package's own sample key
cases = [
    (1400000000, "administrator", 1795000000, 180 * 86400),
    (1400000000, "xiaojun", 1795000000, 86400),
    (1400012345, "用户-42", 1795000001, 3600),
    (20026991, "admin with spaces", 1700000000, 1),
    (4294967295, "a" * 64, 1795000000, 10 * 365 * 86400),
]
vectors = []
real_time = time.time
for sdkappid, identifier, at, expire in cases:
    time.time = lambda at=at: at
    vectors.append({"sdkAppId": sdkappid, "identifier": identifier, "secretKey": KEY, "time": at, "expire": expire,
                    "usersig": TLSSigAPIv2.TLSSigAPIv2(sdkappid, KEY).gen_sig(identifier, expire)})
time.time = real_time
print(json.dumps({"generator": "tls-sig-api-v2 (PyPI), TLSSigAPIv2.gen_sig", "vectors": vectors}, indent=2, ensure_ascii=False))
