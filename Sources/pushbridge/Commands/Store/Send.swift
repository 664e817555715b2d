import ArgumentParser
import Foundation
import PushBridgeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore

struct Send: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a dialect message: one decision JSON object per receiver, one per line.",
        discussion: """
            {"receiver":id,"push":true,"payload":{…},"deliveries":[…]} or {"receiver":id,"push":false,"reason":…}. \
            A group message goes to every member except the sender, in membership order; one-to-one to its targets in order. \
            The pushed receivers' badge counters are committed in the same transaction. A message id sent before \
            (within 24 hours) prints the first send's decisions again, byte for byte, and counts nothing.
            """)

    @OptionGroup var store: StoreOptions

    @Option(help: "The dialect of the message: easemob-legacy, agora-silent or tencent-tim.")
    var dialect: String

    @Option(help: "When the message is sent (ISO 8601; default: now).")
    var now: String?

    @Option(help: "Render with this profile instead of the dialect's own.")
    var profile: String?

    @Option(help: "The sender, for messages that do not name one (an easemob-legacy body without `from`).")
    var sender: String?

    @Argument(help: "The message file in the dialect's shape.")
    var file: String

    func run() async throws {
        try dialectOption(dialect)
        let now = try instant(now, option: "--now")
        let facade = try await store.facade()
        let chosen = try profileOption(profile, in: facade.registry)
        let (message, outcome) = try await rejectingBadInput(file: file) { () async throws -> (JSONValue, PushFacade.SendOutcome) in
            let message = try JSONParser.parse(try FixtureDiscovery.read(file))
            return (message, try await reportingStoreErrors { try await facade.sendMessage(message, dialect: dialect, now: now, profile: chosen, sender: sender) })
        }
        let decisions = outcome.decisions
        var out: [UInt8] = []
        out.reserveCapacity(64 * 1024)
        for decision in decisions {
            out += decision.json
            out.append(10)
            if out.count >= 60 * 1024 {
                writeOut(out)
                out.removeAll(keepingCapacity: true)
            }
        }
        writeOut(out)
        printError(Self.summary(decisions) + (outcome.isRepeat ? " — a repeat of message \(outcome.messageID): its first decisions, nothing counted" : ""))
        if decisions.isEmpty, !outcome.isRepeat, case .group(let group)? = try? facade.adapter(dialect).address(of: message, at: .root).audience {
            printError("pushbridge: group \"\(group)\" has no members: nothing was decided (set them with `pushbridge members --db \(store.db) --group \(group) --set …`)")
        }
    }

    /// The line after a send on stderr: `sent: 3 receivers, 2 pushed (3 deliveries), 1 suppressed (no-device 1)`.
    static func summary(_ decisions: [PushFacade.ReceiverDecision]) -> String {
        var reasons: [String: Int] = [:]
        var pushed = 0
        var deliveries = 0
        for item in decisions {
            switch item.fanOut {
            case .push(let request):
                pushed += 1
                deliveries += request.deliveryCount
            case .suppressed(let reason): reasons[reason.rawValue, default: 0] += 1
            }
        }
        let suppressed = decisions.count - pushed
        var line = "sent: \(decisions.count) receiver\(decisions.count == 1 ? "" : "s"), \(pushed) pushed (\(deliveries) deliver\(deliveries == 1 ? "y" : "ies")), \(suppressed) suppressed"
        if !reasons.isEmpty { line += " (" + reasons.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")" }
        return line
    }
}
