import ArgumentParser
import Foundation
import PushBridgeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore

struct User: AsyncParsableCommand {
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

    func run() async throws {
        try dialectOption(dialect)
        let since = try since.map { try instant($0, option: "--since") }
        let facade = try await store.facade()
        try await rejectingBadInput(file: "--user \(user)") {
            try await reportingStoreErrors {
                switch presence {
                case .online?: try await facade.setPresence(.online, of: user, dialect: dialect)
                case .offline?: try await facade.setPresence(.offline, of: user, dialect: dialect)
                case .background?: try await facade.setPresence(.background(since: since!), of: user, dialect: dialect)
                case nil: break
                }
                guard timezone != nil || badge != nil else { return }
                try await facade.updateUser(user, dialect: dialect) { state in
                    if let timezone { state.timeZone = TimeZone(identifier: timezone)! }
                    if let badge { state.badge = badge }
                }
            }
        }
    }
}
