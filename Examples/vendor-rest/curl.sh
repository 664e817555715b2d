#!/usr/bin/env bash
# The vendors' own REST, spoken to PushBridge with curl (the article "Drop-in for vendor REST",
# `make demo-vendor-rest`): after the operator's one-time setup, the backend uses vendor REST alone —
# Easemob users, a device binding, a group and a group message; a Tencent UserSig, a group and messages.
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
say "Easemob / Agora Chat: the backend's own requests, only the host changed (no native call from here on)"
TOKEN=$(curl -sf -X POST -H "$J" "$B/acme/chat/token" \
  -d '{"grant_type":"client_credentials","client_id":"YXA6-client-id","client_secret":"YXA6-client-secret"}' \
  | sed 's/.*"access_token":"\([^"]*\)".*/\1/')
E="Authorization: Bearer $TOKEN"
curl -sf -X POST -H "$E" -H "$J" "$B/acme/chat/users" -d '[{"username":"alice","password":"p"},{"username":"bob","password":"p"}]' > /dev/null
curl -sf -X PUT -H "$E" -H "$J" "$B/acme/chat/users/bob" -d '{"notification_display_style":1}'; echo
say "bob's device, bound as the Easemob push REST binds it"
curl -sf -X PUT -H "$E" -H "$J" "$B/acme/chat/users/bob/push/binding" \
  -d '{"device_id":"bob-iphone","device_token":"a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90","notifier_name":"chat-dev"}'; echo
curl -sf -X POST -H "$E" -H "$J" -D "$DATA/easemob.headers" "$B/acme/chat/messages" \
  -d '{"target_type":"users","target":["bob"],"msg":{"type":"txt","msg":"Lunch?"},"from":"alice"}'; echo
say "the decision, read back with the id PushBridge-Messages names"
ID=$(tr -d '\r' < "$DATA/easemob.headers" | sed -n 's/^pushbridge-messages: //Ip')
curl -sf -H "$A" "$B/v1/apps/chat/messages/$ID"; echo
say "a group, created and messaged over Easemob REST"
GROUP=$(curl -sf -X POST -H "$E" -H "$J" "$B/acme/chat/chatgroups" \
  -d '{"groupname":"Lunch","description":"who is in","public":false,"maxusers":200,"owner":"alice","members":["bob"]}' \
  | sed 's/.*"groupid":"\([0-9]*\)".*/\1/')
curl -sf -H "$E" "$B/acme/chat/chatgroups/$GROUP/users"; echo
curl -sf -X POST -H "$E" -H "$J" -D "$DATA/group.headers" "$B/acme/chat/messages/chatgroups" \
  -d "{\"from\":\"alice\",\"to\":[\"$GROUP\"],\"type\":\"txt\",\"body\":{\"msg\":\"Noon at the usual place\"}}" > /dev/null
ID=$(tr -d '\r' < "$DATA/group.headers" | sed -n 's/^pushbridge-messages: //Ip')
curl -sf -H "$A" "$B/v1/apps/chat/messages/$ID"; echo

say "Tencent registers device tokens only from its client SDK: carol's app reports hers (native API)"
curl -sf -X POST -H "$A" -H "$J" "$B/v1/apps/chat/users/carol/calls?dialect=tencent-tim" \
  -d '[{"call":"setToken","busiId":2383,"token":"0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"}]' > /dev/null

say "Tencent Cloud IM: a UserSig made as Tencent's TLSSigAPIv2 makes it, then sendmsg"
SIG=$("$PUSHBRIDGE" usersig --sdkappid 1400000000 --identifier administrator --secret-key-file "$DATA/tencent.key")
curl -sf -X POST -H "$J" -D "$DATA/tencent.headers" \
  "$B/v4/openim/sendmsg?sdkappid=1400000000&identifier=administrator&usersig=$SIG&random=99999999&contenttype=json" \
  -d '{"From_Account":"alice","To_Account":"carol","MsgRandom":1287657,
       "MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"hello"}}],
       "OfflinePushInfo":{"Title":"Alice","ApnsInfo":{"Sound":"dingdong.aiff","BadgeMode":0}}}'; echo
ID=$(tr -d '\r' < "$DATA/tencent.headers" | sed -n 's/^pushbridge-messages: //Ip')
curl -sf -H "$A" "$B/v1/apps/chat/messages/$ID"; echo
say "a Tencent group: imported accounts, create_group, send_group_msg (MsgSeq counts from 1 in each group)"
Q="sdkappid=1400000000&identifier=administrator&usersig=$SIG&random=1&contenttype=json"
curl -sf -X POST -H "$J" "$B/v4/im_open_login_svc/multiaccount_import?$Q" -d '{"Accounts":["alice","carol"]}' > /dev/null
curl -sf -X POST -H "$J" "$B/v4/group_open_http_svc/create_group?$Q" \
  -d '{"Type":"Public","Name":"Lunch","GroupId":"lunch","Owner_Account":"alice","MemberList":[{"Member_Account":"carol"}]}'; echo
curl -sf -X POST -H "$J" "$B/v4/group_open_http_svc/send_group_msg?$Q" \
  -d '{"GroupId":"lunch","From_Account":"alice","Random":7,"MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"Noon?"}}]}'; echo
say "a bad signature: Tencent's error code, in Tencent's envelope"
curl -sf -X POST -H "$J" "$B/v4/openim/sendmsg?sdkappid=1400000000&identifier=administrator&usersig=forged&random=1&contenttype=json" -d '{}'; echo
