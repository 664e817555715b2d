import ArgumentParser
import Foundation
import PushBridgeConformance
import PushBridgeServiceConformance
import PushBridgeFacadeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import Synchronization

/// Checks a dialect named by an option; an unknown one → one line on stderr (with the likeliest
/// dialect) and exit 2. The same wording whichever option names it.
/// - Parameters:
///   - id: the dialect id given.
///   - option: the option that named it (`--dialect`, `--to`, `--from`).
///   - registry: the known dialects.
func dialectOption(_ id: String, option: String = "--dialect", in registry: DialectRegistry = .standard) throws {
    _ = try rejectingOption(option) { try registry.adapter(id, at: .root) }
}

/// Runs a lookup of an option's value; bad input → `pushbridge: OPTION: expected …, found … [code]`
/// on stderr and exit 2 (the wording of every option check).
func rejectingOption<T>(_ option: String, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as InputError {
        printError("pushbridge: \(option): expected \(error.expected)" + (error.found.map { ", found \($0)" } ?? "") + " [\(error.code)]")
        throw ExitCode(2)
    }
}

/// Prints one line to standard error.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// The profile a `--profile` option names; an unknown one → one line on stderr (with the likeliest
/// profile) and exit 2.
func profileOption(_ id: String?, in registry: DialectRegistry) throws -> Profile? {
    guard let id else { return nil }
    return try rejectingOption("--profile") { try registry.profile(id, at: .root) }
}

/// Whether standard output gets colours: a terminal, and `NO_COLOR` unset or empty (no-color.org).
var colorsOnStandardOutput: Bool {
    isatty(STDOUT_FILENO) == 1 && (ProcessInfo.processInfo.environment["NO_COLOR"] ?? "").isEmpty
}

/// Runs a body that may reject bad input; bad input → one line on stderr and exit 2.
func rejectingBadInput<T>(file: String?, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as InputError {
        throw rejected(error, file: file)
    }
}

/// `rejectingBadInput(file:_:)` for awaited work.
func rejectingBadInput<T>(file: String?, _ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as InputError {
        throw rejected(error, file: file)
    }
}

/// Prints bad input (in `file`, when given) and returns the exit it ends with.
private func rejected(_ error: InputError, file: String?) -> ExitCode {
    printError("pushbridge: " + (file.map { error.in(file: $0) } ?? error).description)
    return ExitCode(2)
}
