import ArgumentParser
import Foundation
import PushBridgeConformance
import PushBridgeServiceConformance
import PushBridgeFacadeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import Synchronization

/// A secret from the file an option names, else from an environment variable (never from the
/// command line, where process lists show it); exits 2 naming both when neither has it.
func readSecret(file: String?, option: String, variable: String, what: String, command: String) throws -> String {
    let text: String?
    if let file {
        guard let data = FileManager.default.contents(atPath: file) else {
            printError("pushbridge: \(option): expected a readable file, found \"\(file)\" [unreadable-file]")
            throw ExitCode(2)
        }
        text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    } else {
        text = ProcessInfo.processInfo.environment[variable]
    }
    guard let text, !text.isEmpty else {
        printError("pushbridge: \(command): expected \(what) in \(option) or \(variable) [missing-key]")
        throw ExitCode(2)
    }
    return text
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
