import CSQLite
import Foundation
import PushBridgeStore
import PushBridgeVendorREST

package enum ScenarioDecisionText {
    package static let mutableContent = """
        {"push":true,"payload":{"aps":{"alert":{"body":"you got a new message"},"badge":1,"sound":"default","mutable-content":1},\
        "f":"6001","m":"373360335316321408","t":"6006"},"deliveries":[{"device":{"token":\
        "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90","environment":"development"},"headers":\
        {"apns-push-type":"alert","apns-priority":"10","apns-topic":"com.easemob.chatdemoui"}}]}
        """
}

/// A fresh database path in the temporary folder.
package func temporaryDatabase() -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-db-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir.appendingPathComponent("state.db").path
}

/// Runs SQL on a database with the sqlite3 library directly (outside the store); returns the
/// first column of every row as text.
@discardableResult
package func sqlite(_ path: String, _ sql: String) throws -> [String] {
    var db: OpaquePointer?
    guard sqlite3_open(path, &db) == SQLITE_OK, let db else { throw StoreError(.sqlite, "cannot open \(path)") }
    defer { sqlite3_close(db) }
    var statement: OpaquePointer?
    guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
        throw StoreError(.sqlite, String(cString: sqlite3_errmsg(db)), context: sql)
    }
    defer { sqlite3_finalize(statement) }
    var rows: [String] = []
    while true {
        let rc = sqlite3_step(statement)
        if rc == SQLITE_DONE { break }
        guard rc == SQLITE_ROW else { throw StoreError(.sqlite, String(cString: sqlite3_errmsg(db)), context: sql) }
        rows.append(sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "NULL")
    }
    return rows
}

/// Base64url without padding, as app tokens use it.
package enum AppTokenTestSupport {
    package static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The one-character changes that keep the significant bits of the last character: the
    /// spellings a lenient decoder reads as the same bytes.
    package static func siblings(of text: String, alphabet: StrictBase64) -> [String] {
        var chars = Array(text.utf8)
        guard let last = chars.lastIndex(where: { $0 != alphabet.padding }) else { return [] }
        let table = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8) + [alphabet.plus, alphabet.slash]
        guard let value = table.firstIndex(of: chars[last]) else { return [] }
        // The encoded part is what follows the last "." (a token's signature), or the whole text.
        let digits = (chars.lastIndex(of: UInt8(ascii: ".")).map { chars[($0 + 1)...] } ?? chars[...]).filter { $0 != alphabet.padding }.count
        let spare = digits % 4 == 2 ? 0x0F : digits % 4 == 3 ? 0x03 : 0
        var out: [String] = []
        for other in 0..<64 where other != value && other & ~spare == value & ~spare {
            chars[last] = table[other]
            out.append(String(decoding: chars, as: UTF8.self))
        }
        return out
    }
}

/// UserSig verification for tests outside this file.

package enum PushBridgeVendorRESTProbe {
    package static func verify(_ sig: String, sdkAppID: UInt64, identifier: String, key: String) throws {
        _ = try UserSig.verify(sig, sdkAppID: sdkAppID, identifier: identifier, secretKey: key, now: Int64(Date().timeIntervalSince1970))
    }
}
