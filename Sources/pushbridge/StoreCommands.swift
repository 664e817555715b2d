import ArgumentParser
import Foundation
import PushBridgeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore

/// The options every facade command shares: the database and its durability.
struct StoreOptions: ParsableArguments {
    @Option(help: "The SQLite database file (created with its schema when missing).")
    var db: String

    @Option(help: "SQLite synchronous mode: normal (commits survive a killed process) or full (also power loss; one fsync per commit).")
    var synchronous: SQLiteStateStore.Options.Synchronous = .normal

    /// Opens the facade over the database; a store failure → one line on stderr and exit 4.
    func facade() throws -> PushFacade {
        try reportingStoreErrors { PushFacade(store: try SQLiteStateStore(path: db, options: .init(synchronous: synchronous))) }
    }
}

extension SQLiteStateStore.Options.Synchronous: ExpressibleByArgument {
    public init?(argument: String) { self.init(rawValue: argument.uppercased()) }
    public static var allValueStrings: [String] { allCases.map { $0.rawValue.lowercased() } }
}

/// Runs a store operation; a ``StoreError`` → one line on stderr and exit 4.
func reportingStoreErrors<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as StoreError {
        printError("pushbridge: \(error)")
        throw ExitCode(4)
    }
}

/// Reads `--now`, or the current time.
func instant(_ text: String?, option: String) throws -> Instant {
    guard let text else { return Instant(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))) }
    guard let instant = Instant(iso8601: text) else {
        printError("pushbridge: \(option): expected an ISO 8601 date-time such as 2026-03-02T09:15:00Z, found \"\(text)\" [invalid-value]")
        throw ExitCode(2)
    }
    return instant
}

/// Writes bytes to standard output at once (unbuffered: what is printed has been done).
func writeOut(_ bytes: [UInt8]) {
    FileHandle.standardOutput.write(Data(bytes))
}

struct App: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Set the app configuration of a database: certificates and templates.",
        discussion: "APP.json is the scenario `app` object: {\"certificates\": [{\"name\" or \"busiId\", \"bundleId\", \"environment\"}], \"templates\": [...]}.")

    @OptionGroup var store: StoreOptions

    @Argument(help: "The app configuration file.")
    var file: String

    func run() throws {
        let facade = try store.facade()
        try rejectingBadInput(file: file) {
            let app = try Scenario.app(from: try JSONParser.parse(try FixtureDiscovery.read(file)), at: .root)
            try reportingStoreErrors { try facade.configure(app) }
        }
    }
}

struct Apply: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply a user's dialect calls to the database.",
        discussion: """
            CALLS.json is an array of call objects ({"call": name, …params, "at"?: ISO 8601}). Each call is its own \
            transaction; after it commits, one line {"applied":N,"call":name} is printed (a query call adds "result"). \
            A rejected call changes nothing: the calls before it stay applied (they were printed), the rest are not \
            applied, and the error goes to stderr with exit 2. With --atomic all calls are one transaction: all or none.
            """)

    @OptionGroup var store: StoreOptions

    @Option(help: "The dialect of the calls: easemob-legacy, agora-silent or tencent-tim.")
    var dialect: String

    @Option(help: "The user making the calls.")
    var user: String

    @Option(help: "When calls without `at` are made (ISO 8601; default: now).")
    var now: String?

    @Flag(help: "Apply all calls in one transaction: all of them or none.")
    var atomic = false

    @Argument(help: "A JSON file holding an array of calls.")
    var file: String

    func run() throws {
        try dialectOption(dialect)
        let now = try instant(now, option: "--now")
        let facade = try store.facade()
        try rejectingBadInput(file: file) {
            let calls = try Scenario.calls(from: try JSONParser.parse(try FixtureDiscovery.read(file)), at: .root, now: now).map {
                PushFacade.DialectCall($0.call, at: $0.at, pointer: $0.pointer)
            }
            let batches = atomic ? [calls] : calls.map { [$0] }
            var index = 1  // calls are counted from 1, as a reader counts them
            for batch in batches where !batch.isEmpty {
                let results = try reportingStoreErrors { () throws -> [JSONValue?] in
                    do {
                        return try facade.apply(batch, dialect: dialect, user: user)
                    } catch let error as InputError where error.code == .unknownReference && (try? facade.app().certificates.isEmpty) == true {
                        // The usual first mistake: calls before the app configuration that names the certificates.
                        var hinted = error
                        hinted.expected += " (the database has no app configuration yet: run `pushbridge app --db \(store.db) APP.json` first)"
                        throw hinted
                    }
                }
                var out: [UInt8] = []
                for (call, result) in zip(batch, results) {
                    var w = JSONWriter(capacity: 64)
                    w.raw("{\"applied\":")
                    w.integer(index)
                    w.raw(",\"call\":")
                    w.write(call.call["call"] ?? .null)
                    if let result {
                        w.raw(",\"result\":")
                        w.write(result)
                    }
                    w.raw("}\n")
                    out += w.bytes
                    index += 1
                }
                writeOut(out)
            }
        }
    }
}

struct Members: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Set or print a group's members.",
        discussion: "With --set the members are replaced (their order is the order `send` prints decisions in), --clear empties the group; without either they are printed as a JSON array.")

    @OptionGroup var store: StoreOptions

    @Option(help: "The group id.")
    var group: String

    @Flag(help: "Replace the members with the users that follow, in order.")
    var set = false

    @Flag(help: "Remove every member.")
    var clear = false

    @Argument(help: "With --set: the new members, in order.")
    var users: [String] = []

    func validate() throws {
        if clear && set { throw ValidationError("--clear and --set do not go together") }
        if !set && !users.isEmpty { throw ValidationError("users are listed only after --set") }
    }

    /// ArgumentParser takes quadratic time in the number of arguments (10,000 members: 26 s), so
    /// `pushbridge` takes the user list after `--set` off the command line before parsing.
    /// - Parameter arguments: the arguments after `members`.
    /// - Returns: the arguments without the list, and the list; `nil` without `--set`.
    static func splitMemberList(_ arguments: [String]) -> (rest: [String], users: [String])? {
        guard let flag = arguments.firstIndex(of: "--set") else { return nil }
        var end = flag + 1
        while end < arguments.count && !arguments[end].hasPrefix("-") { end += 1 }
        return (Array(arguments[...flag] + arguments[end...]), Array(arguments[(flag + 1)..<end]))
    }

    func run() throws {
        let facade = try store.facade()
        try rejectingBadInput(file: "--set") {
            if set && users.isEmpty { throw InputError(.missingKey, at: .root, expected: "at least one user after --set (--clear empties a group)") }
            if clear || set {
                try reportingStoreErrors { try facade.setMembers(users, of: group) }
            } else {
                let members = try reportingStoreErrors { try facade.members(of: group) }
                var w = JSONWriter()
                w.write(.array(members.map(JSONValue.string)))
                print(w.string)
            }
        }
    }
}

struct Send: ParsableCommand {
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

    func run() throws {
        try dialectOption(dialect)
        let now = try instant(now, option: "--now")
        let facade = try store.facade()
        let chosen = try profileOption(profile, in: facade.registry)
        let (message, outcome) = try rejectingBadInput(file: file) { () throws -> (JSONValue, PushFacade.SendOutcome) in
            let message = try JSONParser.parse(try FixtureDiscovery.read(file))
            return (message, try reportingStoreErrors { try facade.sendMessage(message, dialect: dialect, now: now, profile: chosen, sender: sender) })
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
            switch item.decision {
            case .push(let request):
                pushed += 1
                deliveries += request.deliveries.count
            case .suppressed(let reason): reasons[reason.rawValue, default: 0] += 1
            }
        }
        let suppressed = decisions.count - pushed
        var line = "sent: \(decisions.count) receiver\(decisions.count == 1 ? "" : "s"), \(pushed) pushed (\(deliveries) deliver\(deliveries == 1 ? "y" : "ies")), \(suppressed) suppressed"
        if !reasons.isEmpty { line += " (" + reasons.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")" }
        return line
    }
}

struct User: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Set what no dialect call sets: a user's presence, time zone or badge counter.",
        discussion: """
            A server learns presence from its connections (the Easemob dialects have no presence call). Becoming online \
            resets the badge counter. --presence needs a user the database knows; --timezone and --badge create a new \
            user with the dialect's defaults.
            """)

    enum PresenceWord: String, ExpressibleByArgument, CaseIterable {
        case online, offline, background
    }

    @OptionGroup var store: StoreOptions

    @Option(help: "The dialect whose defaults a new user gets.")
    var dialect: String

    @Option(help: "The user.")
    var user: String

    @Option(help: "online, offline or background (with --since).")
    var presence: PresenceWord?

    @Option(help: "When the app went to the background (ISO 8601).")
    var since: String?

    @Option(help: "The IANA time zone do-not-disturb windows are read in.")
    var timezone: String?

    @Option(help: "The badge counter before the next message.")
    var badge: Int?

    func validate() throws {
        if (presence == .background) != (since != nil) { throw ValidationError("--since goes with --presence background, and only with it") }
        if let badge, !(0...99_999).contains(badge) { throw ValidationError("--badge must be 0–99999") }
        if let timezone, TimeZone(identifier: timezone) == nil { throw ValidationError("--timezone: unknown IANA time zone \"\(timezone)\"") }
    }

    func run() throws {
        try dialectOption(dialect)
        let since = try since.map { try instant($0, option: "--since") }
        let facade = try store.facade()
        try rejectingBadInput(file: "--user \(user)") {
            try reportingStoreErrors {
                switch presence {
                case .online?: try facade.setPresence(.online, of: user, dialect: dialect)
                case .offline?: try facade.setPresence(.offline, of: user, dialect: dialect)
                case .background?: try facade.setPresence(.background(since: since!), of: user, dialect: dialect)
                case nil: break
                }
                guard timezone != nil || badge != nil else { return }
                try facade.updateUser(user, dialect: dialect) { state in
                    if let timezone { state.timeZone = TimeZone(identifier: timezone)! }
                    if let badge { state.badge = badge }
                }
            }
        }
    }
}

struct DeviceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "Remove a device token from whichever user has it.",
        discussion: "Prints {\"removed\":token,\"user\":id}. A token no user has is bad input (exit 2); nothing changes.")

    @OptionGroup var store: StoreOptions

    @Option(name: .customLong("delete"), help: "The device token to remove (hex, any case).")
    var token: String

    func run() throws {
        let facade = try store.facade()
        let owner = try rejectingBadInput(file: "--delete") { try reportingStoreErrors { try facade.removeDevice(token: token) } }
        var w = JSONWriter()
        w.raw("{\"removed\":")
        w.string(token.lowercased())
        w.raw(",\"user\":")
        w.string(owner)
        w.raw("}\n")
        writeOut(w.bytes)
    }
}
