#!/usr/bin/env bash
# The vendors' own REST, spoken to PushBridge with curl (the article "Drop-in for vendor REST",
# `make demo-vendor-rest`): an Easemob app token and send, a Tencent UserSig and sendmsg.
set -euo pipefail
PUSHBRIDGE=$(realpath "$(command -v "${PUSHBRIDGE:-pushbridge}")")   # the built executable
PORT=${PORT:-8080}
export PUSHBRIDGE_ADMIN_KEY=${PUSHBRIDGE_ADMIN_KEY:-demo-admin-key-change-me}
DATA=$(mktemp -d)
"$PUSHBRIDGE" serve --db "$DATA" --listen "127.0.0.1:$PORT" > "$DATA/serve.out" 2> "$DATA/serve.log" &
SERVER=$!
trap 'kill -TERM $SERVER; wait $SERVER; rm -rf "$DATA"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/readyz" > /dev/null && break; sleep 0.1; done

B=http://127.0.0.1:$PORT
J='Content-Type: application/json'
say() { printf '\n# %s\n' "$*"; }

say "once, by the operator (native API): an app, its certificates, the vendors' credentials"
KEY=$(curl -sf -X POST -H "Authorization: Bearer $PUSHBRIDGE_ADMIN_KEY" -H "$J" -d '{"app":"chat"}' "$B/v1/apps" | sed 's/.*"key":"\([^"]*\)".*/\1/')
A="Authorization: Bearer $KEY"
curl -sf -X PUT -H "$A" -H "$J" "$B/v1/apps/chat" -d '{"certificates":[
  {"name":"chat-dev","bundleId":"com.example.chat","environment":"development"},
  {"busiId":2383,"bundleId":"com.example.chat","environment":"development"}]}' > /dev/null
curl -sf -X PUT -H "$A" -H "$J" "$B/v1/apps/chat/vendors/easemob" \
  -d '{"org":"acme","app":"chat","clientId":"YXA6-client-id","clientSecret":"YXA6-client-secret"}'; echo
echo 'a-tencent-secret-key-from-the-console' > "$DATA/tencent.key"
curl -sf -X PUT -H "$A" -H "$J" "$B/v1/apps/chat/vendors/tencent" \
  -d "{\"sdkAppId\":1400000000,\"secretKey\":\"$(cat "$DATA/tencent.key")\",\"administrator\":\"administrator\"}"; echo
say "what the receivers' SDKs report: their device tokens"
curl -sf -X POST -H "$A" -H "$J" "$B/v1/apps/chat/users/bob/calls?dialect=easemob-legacy" -d '[
  {"call":"initializeSDK","appkey":"acme#chat","apnsCertName":"chat-dev"},
  {"call":"bindDeviceToken","deviceToken":"a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"}]' > /dev/null
curl -sf -X POST -H "$A" -H "$J" "$B/v1/apps/chat/users/carol/calls?dialect=tencent-tim" \
  -d '[{"call":"setToken","busiId":2383,"token":"0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"}]' > /dev/null

say "Easemob / Agora Chat: the backend's own requests, only the host changed"
TOKEN=$(curl -sf -X POST -H "$J" "$B/acme/chat/token" \
  -d '{"grant_type":"client_credentials","client_id":"YXA6-client-id","client_secret":"YXA6-client-secret"}' \
  | sed 's/.*"access_token":"\([^"]*\)".*/\1/')
curl -sf -X PUT -H "Authorization: Bearer $TOKEN" -H "$J" "$B/acme/chat/users/bob" -d '{"notification_display_style":1}'; echo
curl -sf -X POST -H "Authorization: Bearer $TOKEN" -H "$J" -D "$DATA/easemob.headers" "$B/acme/chat/messages" \
  -d '{"target_type":"users","target":["bob"],"msg":{"type":"txt","msg":"Lunch?"},"from":"alice"}'; echo
say "the decision, read back with the id PushBridge-Messages names"
ID=$(tr -d '\r' < "$DATA/easemob.headers" | sed -n 's/^pushbridge-messages: //Ip')
curl -sf -H "$A" "$B/v1/apps/chat/messages/$ID"; echo

say "Tencent Cloud IM: a UserSig made as Tencent's TLSSigAPIv2 makes it, then sendmsg"
SIG=$("$PUSHBRIDGE" usersig --sdkappid 1400000000 --identifier administrator --secret-key-file "$DATA/tencent.key")
curl -sf -X POST -H "$J" -D "$DATA/tencent.headers" \
  "$B/v4/openim/sendmsg?sdkappid=1400000000&identifier=administrator&usersig=$SIG&random=99999999&contenttype=json" \
  -d '{"From_Account":"alice","To_Account":"carol","MsgRandom":1287657,
       "MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"hello"}}],
       "OfflinePushInfo":{"Title":"Alice","ApnsInfo":{"Sound":"dingdong.aiff","BadgeMode":0}}}'; echo
ID=$(tr -d '\r' < "$DATA/tencent.headers" | sed -n 's/^pushbridge-messages: //Ip')
curl -sf -H "$A" "$B/v1/apps/chat/messages/$ID"; echo
say "a bad signature: Tencent's error code, in Tencent's envelope"
curl -sf -X POST -H "$J" "$B/v4/openim/sendmsg?sdkappid=1400000000&identifier=administrator&usersig=forged&random=1&contenttype=json" -d '{}'; echo
