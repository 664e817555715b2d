// The benchmark's traffic: a documented mix of messages and receivers, deterministic (no randomness
// between runs), decided through PreparedPush exactly as the facade does it.
import Foundation
import PushBridgeCore
import PushBridgeJSON

/// One kind of traffic, with its share of the decisions a run makes.
struct TrafficKind {
    /// The name printed in the table.
    var name: String
    /// What it is.
    var summary: String
    /// Messages of this kind, each with its receivers.
    var messages: [TrafficMessage]
}

/// One message and everyone it goes to.
struct TrafficMessage {
    var message: PushMessage
    var sender: UserState?
    var receivers: [UserState]
    var profile: Profile
    var decider: PushDecider
    var now: Instant
}

/// The mix (decisions per 1,000): one-to-one 450, group summaries 250, mention-only groups 100,
/// do-not-disturb across time zones 100, long bodies 50, banners and translations 50. About one
/// decision in five is suppressed (mention-only, do-not-disturb, online).
enum TrafficMix {
    static let certificate = Certificate(name: "bench", busiId: nil, bundleId: "io.pushbridge.bench", environment: .production)
    static let zones = ["UTC", "Asia/Shanghai", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Sydney"].map { TimeZone(identifier: $0)! }
    static let texts = [
        "ok", "On my way, see you in 5", "明天上午十点开会，别忘了带电脑", "Can you send me the slides from yesterday's review? 🙏",
        "Ça marche, à demain !", "[Sticker]", "Привет! Как дела?", "Lunch at the usual place?",
        "The build is green again — thanks for the quick fix on the flaky delivery test", "👍",
    ]

    static func receiver(_ i: Int, style: DisplayStyle = .messageSummary) -> UserState {
        var state = UserState(user: "user-\(i)", displayStyle: style, backgroundGraceSeconds: 120, timeZone: zones[i % zones.count])
        state.devices = [Device(token: String(format: "%064x", i), certificate: certificate)]
        if i % 7 == 3 { state.devices.append(Device(token: String(format: "%064x", i + 1_000_000), certificate: certificate)) }
        state.badge = i % 12
        return state
    }

    static func sender(_ i: Int) -> UserState {
        var state = receiver(i)
        state.displayName = i % 3 == 0 ? "Li Wei" : i % 3 == 1 ? "Alex Johnson" : "Zoë"
        state.nameCards = ["team-\(i % 5)": "Zoë (ops)"]
        return state
    }

    /// The mix, scaled so that one pass makes `decisions` decisions (≈).
    static func make(decisions: Int = 20_000) -> [TrafficKind] {
        let now = Instant(iso8601: "2026-03-02T14:15:00Z")!
        let deciders = [PushDecider(app: AppConfiguration(certificates: [certificate]))]
        func text(_ i: Int) -> [ContentPart] { i % 9 == 5 ? [.image] : [.text(texts[i % texts.count])] }
        func profile(_ i: Int) -> Profile { Profile.builtIn[i % Profile.builtIn.count] }

        // One-to-one: one receiver each.
        let oneToOne = (0..<(decisions * 450 / 1000)).map { i -> TrafficMessage in
            var m = PushMessage(id: "o\(i)", sender: "user-\(i + 1)", kind: .oneToOne, content: text(i))
            if i % 4 == 0 { m.extensionValue = .object(JSONObject([("orderId", .string("A-\(i)")), ("kind", .int(2))])) }
            var r = receiver(i)
            if i % 25 == 0 { r.presence = .online }
            return TrafficMessage(message: m, sender: sender(i + 1), receivers: [r], profile: profile(i), decider: deciders[0], now: now)
        }
        // Groups of 50 with message summaries (Tencent: the sender's name card and the group's name).
        let groupSize = 50
        let summaries = (0..<(decisions * 250 / 1000 / groupSize)).map { g -> TrafficMessage in
            var m = PushMessage(id: "g\(g)", sender: "user-\(g)", kind: .group, groupId: "team-\(g % 5)", content: text(g))
            m.groupName = "Team \(g % 5)"
            let receivers = (0..<groupSize).map { receiver(g * groupSize + $0 + 1) }
            return TrafficMessage(message: m, sender: sender(g), receivers: receivers, profile: profile(g), decider: deciders[0], now: now)
        }
        // Mention-only groups: most receivers are not mentioned (suppressed), a few are.
        let mentions = (0..<(decisions * 100 / 1000 / groupSize)).map { g -> TrafficMessage in
            var m = PushMessage(id: "n\(g)", sender: "user-\(g)", kind: .group, groupId: "big-\(g)", content: [.text("@user-3 @user-17 please review")])
            m.mentions = .users(["user-3", "user-17", "user-41"])
            let receivers = (0..<groupSize).map { i -> UserState in
                var r = receiver(i + 1)
                r.conversations[ConversationKey(.group, "big-\(g)")] = ConversationPushSettings(remindType: .mentionOnly)
                return r
            }
            return TrafficMessage(message: m, sender: sender(g), receivers: receivers, profile: profile(g), decider: deciders[0], now: now)
        }
        // Do-not-disturb 22:00–08:00 local, receivers spread over six time zones (14:15 UTC is night in some).
        let night = DoNotDisturbWindow(startMinute: 22 * 60, endMinute: 8 * 60)
        let dnd = (0..<(decisions * 100 / 1000 / groupSize)).map { g -> TrafficMessage in
            let m = PushMessage(id: "d\(g)", sender: "user-\(g)", kind: .group, groupId: "world-\(g)", content: text(g))
            let receivers = (0..<groupSize).map { i -> UserState in
                var r = receiver(i + 1)
                r.app.window = night
                return r
            }
            return TrafficMessage(message: m, sender: sender(g), receivers: receivers, profile: profile(g), decider: deciders[0], now: now)
        }
        // Long bodies (2–6 KB, shortened to fit 4096 bytes), one-to-one.
        let long = (0..<(decisions * 50 / 1000)).map { i -> TrafficMessage in
            let body = String(repeating: texts[i % texts.count] + " ", count: 40 + (i % 5) * 25)
            let m = PushMessage(id: "l\(i)", sender: "user-\(i + 1)", kind: .oneToOne, content: [.text(body)])
            return TrafficMessage(message: m, sender: sender(i + 1), receivers: [receiver(i)], profile: profile(i), decider: deciders[0], now: now)
        }
        // Banners and translations: groups where a third see only the generic banner and a third read German.
        let banners = (0..<(decisions * 50 / 1000 / groupSize)).map { g -> TrafficMessage in
            var m = PushMessage(id: "b\(g)", sender: "user-\(g)", kind: .group, groupId: "intl-\(g)", content: [.text("Release notes are out")])
            m.translations = ["de": "Die Versionshinweise sind da", "zh": "发布说明已发布"]
            let receivers = (0..<groupSize).map { i -> UserState in
                var r = receiver(i + 1, style: i % 3 == 0 ? .simpleBanner : .messageSummary)
                if i % 3 == 1 { r.language = i % 2 == 0 ? "de" : "zh" }
                return r
            }
            return TrafficMessage(message: m, sender: sender(g), receivers: receivers, profile: profile(g), decider: deciders[0], now: now)
        }
        return [
            TrafficKind(name: "one-to-one", summary: "short texts and images, a quarter with a custom extension, 1 in 25 receivers online", messages: oneToOne),
            TrafficKind(name: "group-summary", summary: "groups of 50, message summaries, group name and name card", messages: summaries),
            TrafficKind(name: "mention-only", summary: "groups of 50 set to MentionOnly, 3 mentioned", messages: mentions),
            TrafficKind(name: "dnd-time-zones", summary: "groups of 50, 22:00-08:00 windows in six time zones", messages: dnd),
            TrafficKind(name: "long-body", summary: "one-to-one bodies of 2-6 KB, shortened to fit", messages: long),
            TrafficKind(name: "banner-translation", summary: "groups of 50: a third SimpleBanner, a third reading de or zh", messages: banners),
        ]
    }
}

/// What deciding one kind of traffic once gives.
struct MixTally {
    var decisions = 0
    var pushed = 0
    var suppressed = 0
    var payloadBytes = 0
    /// The payloads, in order (for the baselines).
    var payloads: [[UInt8]] = []
}

/// Decides every message of a kind for all its receivers, through a prepared push per message.
@inline(never)
func decide(_ messages: [TrafficMessage], keeping: Bool = false) -> MixTally {
    var tally = MixTally()
    // Indexed, so that messages and receivers are borrowed from their arrays rather than copied.
    for m in messages.indices {
        var push = PreparedPush(
            messages[m].message, sender: messages[m].sender, profile: messages[m].profile, decider: messages[m].decider, receivers: messages[m].receivers.count)
        let now = messages[m].now
        for r in messages[m].receivers.indices {
            tally.decisions += 1
            // The facade's form (`FanOutDecision`), as the facade decides; each payload is written out.
            switch push.fanOutDecision(for: messages[m].receivers[r], badge: messages[m].receivers[r].badge, now: now, devicesIn: nil) {
            case .push(let request):
                tally.pushed += 1
                tally.payloadBytes &+= request.payload.count
                if keeping { tally.payloads.append(request.payload) }
            case .suppressed:
                tally.suppressed += 1
            }
        }
    }
    return tally
}

/// The same decisions with every receiver rendered alone by ``PushDecider`` (the path before
/// ``PreparedPush``, kept as the reference it is tested against).
@inline(never)
func decideEachAlone(_ messages: [TrafficMessage]) -> Int {
    var pushed = 0
    for m in messages.indices {
        for r in messages[m].receivers.indices {
            let item = messages[m]
            if case .push = item.decider.decide(item.message, sender: item.sender, receiver: item.receivers[r], profile: item.profile, now: item.now) {
                pushed += 1
            }
        }
    }
    return pushed
}
