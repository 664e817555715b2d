import ArgumentParser
import Foundation
import PushBridgeConformance
import PushBridgeServiceConformance
import PushBridgeFacadeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import Synchronization

@main
struct PushBridgeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushbridge",
        abstract: "Decide, render and conformance-test iOS offline pushes across chat vendors' dialects.",
        discussion: """
            Dialects: easemob-legacy, agora-silent, tencent-tim (each also a profile: an output shape).
            Exit status: 0 success; 1 a conformance failure (push-task: the task was cancelled); 2 bad input or \
            a usage error (one line on stderr naming the file or option, the JSON pointer and what was expected); \
            3 `translate --strict` lost something; 4 a store failure (push-task: the service did not answer).
            """,
        version: PushBridgeVersion.current,
        subcommands: [Decide.self, Conform.self, Translate.self, Mappings.self, App.self, Apply.self, Members.self, Send.self, User.self, DeviceCommand.self, Serve.self, PushTaskCommand.self, UserSigCommand.self]
    )

    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var memberList: [String]? = nil
        if arguments.first == "members", let (rest, users) = Members.splitMemberList(Array(arguments.dropFirst())) {
            arguments = ["members"] + rest
            memberList = users
        }
        do {
            var command = try parseAsRoot(arguments)
            if let memberList, var members = command as? Members {
                members.users = memberList
                command = members
            }
            if var service = command as? any AsyncParsableCommand {
                try await service.run()
            } else {
                try command.run()
            }
        } catch {
            // Usage errors (ArgumentParser's 64) are bad input too: one exit-code table, 0–4.
            if exitCode(for: error) == .validationFailure {
                printError(fullMessage(for: error))
                exit(withError: ExitCode(2))
            }
            exit(withError: error)
        }
    }
}
