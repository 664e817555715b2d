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
    func facade() async throws -> PushFacade {
        try await reportingStoreErrors { PushFacade(store: try SQLiteStateStore(path: db, options: .init(synchronous: synchronous))) }
    }
}

extension SQLiteStateStore.Options.Synchronous: ExpressibleByArgument {
    public init?(argument: String) { self.init(rawValue: argument.uppercased()) }
    public static var allValueStrings: [String] { allCases.map { $0.rawValue.lowercased() } }
}

/// Runs a store operation; a `StoreError` → one line on stderr and exit 4.
func reportingStoreErrors<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
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
