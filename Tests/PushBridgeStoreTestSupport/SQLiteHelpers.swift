import CSQLite
import Foundation
import PushBridgeTestSupport
import PushBridgeStore

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

