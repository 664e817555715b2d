import Foundation
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore

/// The facade article's example (UsingTheFacade.md), with the files of Examples/facade.
func sendTheFacadeExample(folder: String, database: String) async throws -> [PushFacade.ReceiverDecision] {
    func json(_ file: String) throws -> JSONValue { try JSONParser.parse(try String(contentsOfFile: folder + "/" + file, encoding: .utf8)) }
    let facade = PushFacade(store: try SQLiteStateStore(path: database))
    try await facade.configure(try Scenario.app(from: try json("app.json"), at: .root))   // certificates, templates
    let now = Instant(iso8601: "2026-03-02T09:15:00Z")!
    for (user, file) in [("u1", "u1-calls.json"), ("u2", "u2-calls.json")] {
        for call in try json(file).arrayValue ?? [] {
            try await facade.apply(call, dialect: "agora-silent", user: user, at: now)   // one call, atomic; a query returns its result
        }
    }
    try await facade.setMembers(["u1", "u2", "u3"], of: "g1")
    return try await facade.send(try json("message.json"), dialect: "agora-silent", now: now)  // one decision per receiver
}
