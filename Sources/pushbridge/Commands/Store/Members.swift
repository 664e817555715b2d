import ArgumentParser
import Foundation
import PushBridgeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore

struct Members: AsyncParsableCommand {
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

    func run() async throws {
        let facade = try await store.facade()
        try await rejectingBadInput(file: "--set") {
            if set && users.isEmpty { throw InputError(.missingKey, at: .root, expected: "at least one user after --set (--clear empties a group)") }
            if clear || set {
                try await reportingStoreErrors { try await facade.setMembers(users, of: group) }
            } else {
                let members = try await reportingStoreErrors { try await facade.members(of: group) }
                var w = JSONWriter()
                w.write(.array(members.map(JSONValue.string)))
                print(w.string)
            }
        }
    }
}
