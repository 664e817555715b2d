import ArgumentParser
import Foundation
import PushBridgeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore

struct Apply: AsyncParsableCommand {
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

    func run() async throws {
        try dialectOption(dialect)
        let now = try instant(now, option: "--now")
        let facade = try await store.facade()
        try await rejectingBadInput(file: file) {
            let calls = try Scenario.calls(from: try JSONParser.parse(try FixtureDiscovery.read(file)), at: .root, now: now).map {
                PushFacade.DialectCall($0.call, at: $0.at, pointer: $0.pointer)
            }
            let batches = atomic ? [calls] : calls.map { [$0] }
            var index = 1  // calls are counted from 1, as a reader counts them
            for batch in batches where !batch.isEmpty {
                let results = try await reportingStoreErrors { () async throws -> [JSONValue?] in
                    do {
                        return try await facade.apply(batch, dialect: dialect, user: user)
                    } catch var error as InputError where error.code == .unknownReference {
                        // The usual first mistake: calls before the app configuration that names the certificates.
                        if (try? await facade.app().certificates.isEmpty) == true {
                            error.expected += " (the database has no app configuration yet: run `pushbridge app --db \(store.db) APP.json` first)"
                        }
                        throw error
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
