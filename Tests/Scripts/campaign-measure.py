#!/usr/bin/env python3
"""Times a whole-app push task on a running `pushbridge serve` (loopback only).

Makes an app with USERS users, each with one device (native calls, 16 at a time), binds Easemob
credentials, starts `POST /push/task`, and prints how long the answer took and how long until every
receiver was decided (the task finished), with the receivers a second. Beside it, for a same-run
baseline, it times USERS / 10 one-to-one messages through `POST /v1/apps/{app}/messages` (16 at a time).

    pushbridge serve --db "$(mktemp -d)" --admin-key secret --listen 127.0.0.1:8090 &
    python3 Tests/Scripts/campaign-measure.py --base http://127.0.0.1:8090 --admin-key secret --users 100000
"""
import argparse, http.client, json, threading, time, urllib.parse

def connect(base):
    u = urllib.parse.urlparse(base)
    assert u.hostname in ("127.0.0.1", "localhost", "::1"), "loopback only"
    return http.client.HTTPConnection(u.hostname, u.port, timeout=120)

def call(conn, method, path, key=None, body=None):
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if key: headers["Authorization"] = "Bearer " + key
    conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
    r = conn.getresponse()
    data = r.read()
    return r.status, (json.loads(data) if data else None)

def lanes(base, count, work):
    def run(lane):
        conn = connect(base)
        for i in range(lane, count, 16): work(conn, i)
    threads = [threading.Thread(target=run, args=(lane,)) for lane in range(16)]
    start = time.monotonic()
    for t in threads: t.start()
    for t in threads: t.join()
    return time.monotonic() - start

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--base", required=True); p.add_argument("--admin-key", required=True)
    p.add_argument("--users", type=int, default=100000); p.add_argument("--app", default="campaign")
    a = p.parse_args()
    conn = connect(a.base)
    status, created = call(conn, "POST", "/v1/apps", a.admin_key, {"app": a.app})
    assert status == 201, created
    key = created["key"]
    app = {"certificates": [{"name": "dev", "bundleId": "com.example", "environment": "development"}]}
    assert call(conn, "PUT", f"/v1/apps/{a.app}", key, app)[0] == 200
    def register(c, i):
        token = "%064x" % (0xfa << 240 | i)
        calls = [{"call": "initializeSDK", "appkey": "1#2", "apnsCertName": "dev"}, {"call": "bindDeviceToken", "deviceToken": token}]
        s, body = call(c, "POST", f"/v1/apps/{a.app}/users/u{i}/calls?dialect=easemob-legacy", key, calls)
        assert s == 200, body
    print(f"users: {a.users} registered in {lanes(a.base, a.users, register):.1f} s")
    assert call(conn, "PUT", f"/v1/apps/{a.app}/vendors/easemob", key, {"org": "acme", "app": a.app, "clientId": "YXA6-id", "clientSecret": "YXA6-secret"})[0] == 200
    _, granted = call(conn, "POST", f"/acme/{a.app}/token", None, {"grant_type": "client_credentials", "client_id": "YXA6-id", "client_secret": "YXA6-secret"})
    token = granted["access_token"]
    start = time.monotonic()
    status, answer = call(conn, "POST", f"/acme/{a.app}/push/task", token, {"pushMessage": {"title": "Sale", "content": "Campaign"}})
    answered = time.monotonic() - start
    assert status == 200, answer
    task = answer["data"]
    while True:
        _, s = call(conn, "GET", f"/v1/apps/{a.app}/push-tasks/{task}", key)
        if s["state"] in ("finished", "cancelled"): break
        time.sleep(0.05)
    decided = time.monotonic() - start
    print(f"task: answered in {answered * 1000:.0f} ms; {s['targets']} receivers decided in {decided:.1f} s ({s['targets'] / decided:.0f}/s), pushed {s['pushed']}")
    messages = max(1, a.users // 10)
    def send(c, i):
        m = {"id": f"bm{i}", "from": "u0", "to": f"u{i % a.users}", "chatType": "Chat", "conversationId": f"u{i % a.users}", "body": {"type": "text", "text": "hi"}}
        s, body = call(c, "POST", f"/v1/apps/{a.app}/messages?dialect=agora-silent&answer=summary", key, m)
        assert s == 201, body
    seconds = lanes(a.base, messages, send)
    print(f"baseline: {messages} one-to-one messages in {seconds:.1f} s ({messages / seconds:.0f}/s); task receivers / messages a second: {(s['targets'] / decided) / (messages / seconds):.2f}")

main()
